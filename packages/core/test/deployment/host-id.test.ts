// Issue 23 part 1 (host identity): no requirement id exists for it in REQUIREMENTS.md, so the
// tests are named by the rule. Real files in a real temporary instance root.
import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { HOST_ID_FILE, parseHostId, resolveHostId } from "../../src/deployment/host-id";

const root = () => mkdtemp(path.join(os.tmpdir(), "host-id-"));

describe("host identity (issue 23: a stable host id per instance)", () => {
  it("host id: generated once into the instance root and read back on every start", async () => {
    const instanceRoot = await root();
    const first = await resolveHostId({ instanceRoot });
    expect(first.source).toBe("generated");
    expect(first.hostId).toMatch(/^h-[0-9a-f]{16}$/);
    expect((await readFile(path.join(instanceRoot, HOST_ID_FILE), "utf8")).trim()).toBe(first.hostId);
    const again = await resolveHostId({ instanceRoot });
    expect(again).toEqual({ hostId: first.hostId, source: "file" });
    // No temp file is left behind.
    expect(await readdir(instanceRoot)).toEqual([HOST_ID_FILE]);
  });

  it("host id: two processes starting at once on one root agree (created atomically)", async () => {
    const instanceRoot = await root();
    const ids = await Promise.all(Array.from({ length: 8 }, () => resolveHostId({ instanceRoot })));
    expect(new Set(ids.map((r) => r.hostId)).size).toBe(1);
    expect(ids.filter((r) => r.source === "generated")).toHaveLength(1);
    expect(await readdir(instanceRoot)).toEqual([HOST_ID_FILE]);
  });

  it("host id: two instance roots are two hosts", async () => {
    const a = await resolveHostId({ instanceRoot: await root() });
    const b = await resolveHostId({ instanceRoot: await root() });
    expect(a.hostId).not.toBe(b.hostId);
  });

  it("host id: COPYBACK_HOST_ID wins and writes nothing", async () => {
    const instanceRoot = await root();
    expect(await resolveHostId({ instanceRoot, configured: "host-a" })).toEqual({ hostId: "host-a", source: "env" });
    expect(await readdir(instanceRoot)).toEqual([]);
  });

  it.each([
    ["", /empty/],
    ["a".repeat(64), /64 characters long/],
    ["Host-A", /lowercase/],
    ["-a", /start with a letter or digit/],
    ["a/b", /lowercase/],
    ["a b", /lowercase/],
  ])("host id: a bad COPYBACK_HOST_ID (%j) is a clear error and writes nothing", async (raw, message) => {
    const instanceRoot = await root();
    await expect(resolveHostId({ instanceRoot, configured: raw })).rejects.toMatchObject({ code: "host_id_invalid", message: expect.stringMatching(message) });
    expect(await readdir(instanceRoot)).toEqual([]);
  });

  it("host id: a bad id in the instance root's file is an error, never replaced", async () => {
    const instanceRoot = await root();
    const file = path.join(instanceRoot, HOST_ID_FILE);
    await writeFile(file, "Not Valid\n");
    await expect(resolveHostId({ instanceRoot })).rejects.toMatchObject({ code: "host_id_invalid", message: expect.stringContaining(file) });
    expect(await readFile(file, "utf8")).toBe("Not Valid\n");
  });

  it("host id: the longest valid id (63 characters) is accepted", () => {
    expect(parseHostId(`a${"-".repeat(62)}`, "test")).toHaveLength(63);
  });
});
