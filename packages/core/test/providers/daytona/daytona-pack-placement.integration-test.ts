// R-PV-1: the Daytona plugin's placeAgentPack against the emulator, on its own: the pack lands at
// copyback/pack beside the workspace, a second placement replaces it whole, and one whose upload
// fails leaves the earlier pack exactly as it was (all or nothing).
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { AgentPackFile } from "../../../src/providers/types";
import { useDaytona } from "./daytona-fixture";

const w = useDaytona();

const file = (relativePath: string, content: string, executable = false): AgentPackFile => ({
  relativePath,
  sizeBytes: Buffer.byteLength(content),
  executable,
  open: () => Promise.resolve(Readable.from([Buffer.from(content)])),
});

describe("daytona placeAgentPack", { timeout: 60_000 }, () => {
  it("R-PV-1 places the pack outside the exported tree, replaces it whole, and a failed upload keeps the earlier pack", async () => {
    const { handle, sandboxDir, workspaceDir } = await w().acquire();
    const placed = await w().provider.placeAgentPack!(handle, [file("copyback-pack.json", "{}"), file("bin/rt", "#!/bin/sh\necho 1\n", true), file("lib/a.txt", "a")]);
    const packDir = join(sandboxDir, "copyback", "pack");
    expect(placed.directory).toBe(packDir);
    expect((await readdir(packDir)).sort()).toEqual(["bin", "copyback-pack.json", "lib"]);
    expect((await stat(join(packDir, "bin", "rt"))).mode & 0o777).toBe(0o500);
    expect((await stat(join(packDir, "lib", "a.txt"))).mode & 0o777).toBe(0o400);
    expect(await readdir(workspaceDir).catch(() => [])).toEqual([]);
    expect((await w().exportTree(handle)).manifest.entries).toEqual([]);

    // A second pack replaces the first whole (lib/a.txt is gone).
    await w().provider.placeAgentPack!(handle, [file("copyback-pack.json", "{\"v\":2}"), file("bin/rt", "#!/bin/sh\necho 2\n", true)]);
    expect((await readdir(packDir)).sort()).toEqual(["bin", "copyback-pack.json"]);
    expect(await readFile(join(packDir, "copyback-pack.json"), "utf8")).toBe("{\"v\":2}");

    // A third whose upload fails: refused, the second pack untouched, no staging left.
    w().emulator.faults.once({ op: "upload", kind: "status", status: 400, message: "injected" });
    await expect(w().provider.placeAgentPack!(handle, [file("copyback-pack.json", "{\"v\":3}"), file("bin/rt", "x", true)])).rejects.toThrow();
    expect(w().emulator.faults.pending()).toEqual([]);
    expect(await readFile(join(packDir, "copyback-pack.json"), "utf8")).toBe("{\"v\":2}");
    expect((await readdir(join(sandboxDir, "copyback"))).filter((name) => name.startsWith("pack"))).toEqual(["pack"]);

    // Bad input changes nothing: an unsafe path and an empty pack are refused before any call.
    await expect(w().provider.placeAgentPack!(handle, [file("../escape", "x")])).rejects.toMatchObject({ code: "agent_pack_path_invalid" });
    await expect(w().provider.placeAgentPack!(handle, [])).rejects.toMatchObject({ code: "agent_pack_empty" });
    expect(await readFile(join(packDir, "copyback-pack.json"), "utf8")).toBe("{\"v\":2}");
  });
});
