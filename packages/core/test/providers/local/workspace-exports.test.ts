// The local provider's exports and seeds of a workspace (workspace-exports.ts, workspace-seed.ts,
// export-faults.ts): validated tars out and in, rehearsed export failures, the spool's buffers.
import { createWriteStream } from "node:fs";
import { lstat, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { receiveWorkspaceArchive } from "../../../src/copyback/archive/receive";
import { pooledBlocks, takeBlock } from "../../../src/copyback/archive/spool-memory";
import { encodeHeader } from "../../../src/copyback/archive/tar-header";
import { validateArchive } from "../../../src/copyback/archive/validate";
import type { ProcessIdentity } from "../../../src/process/process-identity";
import type { ExportStream } from "../../../src/providers/types";
import { ISOLATIONS, localProviderSetup, scratchDirectory, until } from "./local-provider-fixture";

const scratch = await scratchDirectory();

// Real processes on a small, busy machine: generous limits, no timed assertions.
describe.each(ISOLATIONS)("local provider (isolation %s)", { timeout: 30_000 }, (isolation) => {
  const { provider, acquired, run } = localProviderSetup(scratch, isolation);

  it("rehearsal: faults.failExports fails that many exports of the lease as a transport failure, then exports work; other leases are not affected", async () => {
    const p = provider();
    const { handle, workspace } = await acquired(p, { faults: { failExports: 2 } });
    await writeFile(join(workspace, "kept.txt"), "kept");
    await expect(p.exportWorkspace!(handle)).rejects.toMatchObject({ kind: "unavailable", code: "provider_fault_injected" });
    await expect(p.salvageExport!(handle)).rejects.toMatchObject({ code: "provider_fault_injected" });
    const archive = await p.exportWorkspace!(handle);
    archive.resume();
    await new Promise((resolve) => archive.on("end", resolve));
    expect(await readFile(join(workspace, "kept.txt"), "utf8")).toBe("kept");
    const other = await acquired(p);
    (await other.p.exportWorkspace!(other.handle)).resume();
    await expect(acquired(p, { faults: { failExports: 0 } })).rejects.toMatchObject({ code: "provider_config_invalid" });
  });

  it("the export's buffers return to the pool after the receive only when the caller says it is the single receiver", async () => {
    const p = provider();
    const { handle, workspace } = await acquired(p);
    await writeFile(join(workspace, "big.bin"), Buffer.alloc(3 * 1024 * 1024, 7));
    const pooledAfter = async (singleReceiver: boolean): Promise<number> => {
      const staging = await mkdtemp(join(tmpdir(), "local-export-staging-"));
      try {
        // Whatever the pool holds is taken first, so only this export's blocks can come back.
        while (pooledBlocks() > 0) takeBlock();
        const received = await receiveWorkspaceArchive({ archive: await p.exportWorkspace!(handle, { singleReceiver }), stagingDir: staging });
        expect(received.kind).toBe("safe");
        return pooledBlocks();
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
    };
    expect(await pooledAfter(false)).toBe(0);
    expect(await pooledAfter(true)).toBeGreaterThanOrEqual(3);
    // And only then it counts a lower bound of the archive's size for the spool (at least the file).
    const hinted = (await p.exportWorkspace!(handle, { singleReceiver: true })) as ExportStream;
    const plain = (await p.exportWorkspace!(handle)) as ExportStream;
    hinted.destroy();
    plain.destroy();
    expect(hinted.expectedBytes).toBeGreaterThanOrEqual(3 * 1024 * 1024 + 512);
    expect(plain.expectedBytes).toBeUndefined();
  });

  it("exports the workspace as a validated tar and seeds a workspace from it, replacing what was there", async () => {
    const source = await acquired();
    await run(source.p, source.handle, ["sh", "-c", "mkdir -p a/node_modules && echo x > a/x && echo y > a/node_modules/y && ln -s a/x link"]).result;
    const file = join(scratch, `export-${isolation}.tar`);
    await pipeline(await source.p.exportWorkspace!(source.handle, { exclude: ["node_modules"] }), createWriteStream(file));
    expect(await validateArchive(file)).toMatchObject({ kind: "safe", entries: 3 });

    const target = await acquired();
    await target.p.seedWorkspace!(target.handle, Readable.from([await readFile(file)]));
    expect(await readFile(join(target.workspace, "a", "x"), "utf8")).toBe("x\n");
    expect((await lstat(join(target.workspace, "link"))).isSymbolicLink()).toBe(true);
    // Seeded again (a reused sandbox): the old contents go, the archive's come back.
    await writeFile(join(target.workspace, "leftover.txt"), "old run");
    await target.p.seedWorkspace!(target.handle, Readable.from([await readFile(file)]));
    expect((await readdir(target.workspace)).sort()).toEqual(["a", "link"]);
    expect(await readFile(join(target.workspace, "a", "x"), "utf8")).toBe("x\n");

    const salvage = await source.p.salvageExport!(source.handle);
    expect(salvage.message).toBe("The workspace export contained unsafe links; a second export omitted them.");
    salvage.archive.resume();
  });

  it("refuses an unsafe seed archive and changes nothing, in an empty or a non-empty workspace", async () => {
    const { p, handle, workspace, root } = await acquired();
    const unsafe = Buffer.concat([...encodeHeader({ path: "../escape", type: "File", mode: 0o644, size: 1 }), Buffer.from("x"), Buffer.alloc(511 + 1024)]);
    await expect(p.seedWorkspace!(handle, Readable.from([unsafe]))).rejects.toMatchObject({ code: "provider_seed_archive_unsafe" });
    expect(await readdir(workspace)).toEqual([]);
    await writeFile(join(workspace, "mine.txt"), "kept");
    await expect(p.seedWorkspace!(handle, Readable.from([unsafe]))).rejects.toMatchObject({ code: "provider_seed_archive_unsafe" });
    expect(await readdir(workspace)).toEqual(["mine.txt"]);
    expect((await readdir(join(root, "control"))).filter((n) => n.startsWith("seed-"))).toEqual([]);
    await expect(lstat(join(root, "escape"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("does not replace the workspace under a running agent", async () => {
    const { p, handle, workspace } = await acquired();
    let leader: ProcessIdentity | null = null;
    const { result, output } = run(p, handle, ["sh", "-c", "echo ready; while [ ! -e go ]; do sleep 0.05; done"], { onStart: (i) => void (leader = i) });
    await until(async () => leader !== null && output.stdout.includes("ready"));
    const empty = Buffer.alloc(1024);
    await expect(p.seedWorkspace!(handle, Readable.from([empty]))).rejects.toMatchObject({ code: "provider_sandbox_busy" });
    await writeFile(join(workspace, "go"), "");
    expect((await result).exitCode).toBe(0);
    await p.seedWorkspace!(handle, Readable.from([empty]));
    expect(await readdir(workspace)).toEqual([]);
  });
});
