import { execFileSync } from "node:child_process";
import { linkSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OWNER_SIDECAR_MAX_BYTES, parseOwnerSidecar, readOwnerSidecar } from "../../src/copyback/locks";
import { writeOwnerSidecar } from "../../src/copyback/locks/owner-sidecar";
import { tempDir } from "./helpers";

describe("owner sidecar parsing (pure)", () => {
  it("R-LK-3: accepts a well-formed claim as a claim", () => {
    expect(parseOwnerSidecar(JSON.stringify({ pid: 42, createdAt: "2026-01-01T00:00:00.000Z", hostname: "h", target: "/w" }))).toEqual({
      status: "valid",
      pid: 42,
      createdAt: "2026-01-01T00:00:00.000Z",
      hostname: "h",
      target: "/w",
    });
  });

  it("R-LK-3: garbage, wrong types and huge input yield a status, never an exception", () => {
    expect(parseOwnerSidecar("{not json").status).toBe("invalid");
    expect(parseOwnerSidecar("[1,2]").status).toBe("invalid");
    expect(parseOwnerSidecar("null").status).toBe("invalid");
    expect(parseOwnerSidecar(JSON.stringify({ pid: "42", createdAt: "2026-01-01T00:00:00Z" }))).toMatchObject({ status: "invalid", pid: null });
    expect(parseOwnerSidecar(JSON.stringify({ pid: -1, createdAt: "2026-01-01T00:00:00Z" }))).toMatchObject({ status: "invalid", pid: null });
    expect(parseOwnerSidecar(JSON.stringify({ pid: 1.5, createdAt: "yesterday-ish" }))).toMatchObject({ status: "invalid", pid: null, createdAt: null });
    expect(parseOwnerSidecar("x".repeat(OWNER_SIDECAR_MAX_BYTES + 1)).status).toBe("oversized");
  });

  it("strips control characters and caps lengths of text fields", () => {
    const parsed = parseOwnerSidecar(JSON.stringify({ pid: 7, createdAt: "2026-01-01T00:00:00Z", hostname: "ev\u001b[31mil\nhost" + "h".repeat(400) }));
    expect(parsed.hostname).toMatch(/^ev\[31milhost/);
    expect(parsed.hostname?.length).toBe(255);
  });
});

describe("owner sidecar files", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ dir, cleanup } = await tempDir("sidecar")));
  afterAll(() => cleanup());

  it("reads absent, oversized, symlinked, FIFO and hard-linked sidecars without following or blocking", async () => {
    expect((await readOwnerSidecar(path.join(dir, "absent.json"))).status).toBe("absent");

    const big = path.join(dir, "big.json");
    writeFileSync(big, JSON.stringify({ pid: 1, createdAt: "2026-01-01T00:00:00Z", pad: "x".repeat(10_000) }));
    expect((await readOwnerSidecar(big)).status).toBe("oversized");

    const real = path.join(dir, "real.json");
    writeFileSync(real, JSON.stringify({ pid: 1, createdAt: "2026-01-01T00:00:00Z" }));
    const link = path.join(dir, "link.json");
    symlinkSync(real, link);
    expect((await readOwnerSidecar(link)).status).toBe("not_regular");

    const hard = path.join(dir, "hard.json");
    linkSync(real, hard);
    expect((await readOwnerSidecar(hard)).status).toBe("not_regular");

    const fifo = path.join(dir, "fifo.json");
    execFileSync("mkfifo", [fifo]);
    expect((await readOwnerSidecar(fifo)).status).toBe("not_regular");
  });

  it("writing replaces a symlink or hard link at the name without touching what it pointed to", () => {
    const victim = path.join(dir, "victim.txt");
    writeFileSync(victim, "precious");
    const sidecar = path.join(dir, "w.lock.owner.json");
    symlinkSync(victim, sidecar);
    expect(writeOwnerSidecar(sidecar, { pid: 1, createdAt: "2026-01-01T00:00:00Z" })).toBe(true);
    expect(readFileSync(victim, "utf8")).toBe("precious");
    expect(JSON.parse(readFileSync(sidecar, "utf8"))).toEqual({ pid: 1, createdAt: "2026-01-01T00:00:00Z" });

    const sidecar2 = path.join(dir, "w2.lock.owner.json");
    linkSync(victim, sidecar2);
    expect(writeOwnerSidecar(sidecar2, { pid: 2, createdAt: "2026-01-01T00:00:00Z" })).toBe(true);
    expect(readFileSync(victim, "utf8")).toBe("precious");
  });
});
