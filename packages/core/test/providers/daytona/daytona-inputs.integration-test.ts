// The Daytona provider's placeInputs (R-RC-5) and measureSandbox against the emulator.
import { link, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { SandboxInput } from "../../../src/providers/types";
import { useDaytona } from "./daytona-fixture";

const w = useDaytona();

const streamed = (relativePath: string, bytes: Buffer, sizeBytes = bytes.length): SandboxInput => ({ relativePath, sizeBytes, open: async () => Readable.from([bytes]) });

describe("daytona provider: inputs and size", { timeout: 60_000 }, () => {
  it("R-RC-5 places inputs outside the exported workspace at the paths the agent is told, and replaces them all at once", async () => {
    const { provider } = w();
    const a = await w().acquire();
    await w().seed(a.handle, await w().tree({ "work.txt": "w" }));
    const placed = await provider.placeInputs!(a.handle, [
      streamed("att-1/notes.md", Buffer.from("# notes\n")),
      { relativePath: "context.md", render: (p) => Buffer.from(p.paths.join("\n")) },
    ]);
    expect(placed.directory).toBe(join(a.sandboxDir, "copyback/inputs"));
    expect(placed.paths).toEqual([join(placed.directory, "att-1/notes.md"), join(placed.directory, "context.md")]);
    expect(placed.readOnly).toBe(false);
    // The agent reads them at those paths.
    const { result } = await w().exec(a.handle, ["sh", "-c", `cat "$1" > seen.txt`, "sh", placed.paths[0] as string]);
    expect(result.exitCode).toBe(0);
    expect(await readFile(join(a.workspaceDir, "seen.txt"), "utf8")).toBe("# notes\n");
    expect(await readFile(placed.paths[1] as string, "utf8")).toBe(placed.paths.join("\n"));
    expect((await w().exportTree(a.handle)).manifest.entries.map((e) => e.path)).toEqual(["seen.txt", "work.txt"]);

    // A stream that errors (the caller's check failed) or ends short places nothing: the old inputs stay.
    const failing: SandboxInput = { relativePath: "att-2/x.bin", sizeBytes: 10, open: async () => Readable.from((async function* () { yield Buffer.from("12345"); throw new Error("hash mismatch"); })()) };
    await expect(provider.placeInputs!(a.handle, [streamed("att-3/y.txt", Buffer.from("y")), failing])).rejects.toThrow();
    await expect(provider.placeInputs!(a.handle, [streamed("att-4/z.txt", Buffer.from("zz"), 5)])).rejects.toMatchObject({ code: "provider_input_incomplete" });
    expect(await readFile(placed.paths[0] as string, "utf8")).toBe("# notes\n");
    await expect(readFile(join(placed.directory, "att-3/y.txt"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(provider.placeInputs!(a.handle, [streamed("../escape", Buffer.from("x"))])).rejects.toThrow();

    // The next seed removes them (an earlier run's inputs are not the next run's).
    await w().seed(a.handle, await w().tree({ "work.txt": "w2" }));
    await expect(readFile(placed.paths[0] as string)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("measures the workspace and the whole sandbox, a hard-linked file once, and says when a budget cut it short", async () => {
    const { provider } = w();
    const a = await w().acquire();
    await w().seed(a.handle, await w().tree({ "a.bin": Buffer.alloc(1_000, 1), "d/b.bin": Buffer.alloc(500, 2), "d/e/": "" }));
    await link(join(a.workspaceDir, "a.bin"), join(a.workspaceDir, "d/a-again.bin"));
    const whole = await provider.measureSandbox!(a.handle, { budget: { timeMs: 10_000, entries: 10_000 } });
    expect(whole.workspace).toEqual({ bytes: 1_500, entries: 5 });
    expect(whole.lowerBound).toBeNull();
    expect(whole.sandbox?.entries).toBeGreaterThan(whole.workspace.entries);
    expect(whole.sandbox?.bytes).toBeGreaterThanOrEqual(1_500);
    // The export stores the hard-linked file as ordinary bytes (validation refuses hard-link entries).
    const exported = await w().exportTree(a.handle);
    expect(exported.manifest.entries.find((e) => e.path === "d/a-again.bin")).toMatchObject({ type: "file", size: 1_000 });
    const cut = await provider.measureSandbox!(a.handle, { budget: { timeMs: 10_000, entries: 3 } });
    expect(cut.lowerBound).toBe("entry_budget");
    expect(cut.sandbox?.entries).toBe(3);
  });
});
