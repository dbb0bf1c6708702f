// The local provider's lifecycle after acquisition (sandbox-lifecycle.ts): Stop from a restarted
// controller, the verified resume, destroy.
import { lstat, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ProcessIdentity } from "../../../src/process/process-identity";
import { alive, descendants, ISOLATIONS, localProviderSetup, scratchDirectory, until } from "./local-provider-fixture";

const scratch = await scratchDirectory();

// Real processes on a small, busy machine: generous limits, no timed assertions.
describe.each(ISOLATIONS)("local provider (isolation %s)", { timeout: 30_000 }, (isolation) => {
  const { instanceRoot, provider, acquired, run } = localProviderSetup(scratch, isolation);

  it("R-OWN-12 stopLease from a restarted controller stops tar/git-like children, keeps the files; resume checks the identity", async () => {
    const first = provider();
    const { allocation, handle, workspace, root } = await acquired(first);
    await writeFile(join(workspace, "keep.txt"), "kept");
    let leader: ProcessIdentity | null = null;
    const { result, output } = run(first, handle, ["sh", "-c", "sleep 1000 & sleep 1000 & echo ready; wait"], { onStart: (i) => void (leader = i) });
    await until(async () => leader !== null && output.stdout.includes("ready"));
    const tree = await descendants(leader!.pid);
    expect(tree.length).toBeGreaterThanOrEqual(2);

    const restarted = provider();
    const inspection = await restarted.inspect!(handle);
    expect(inspection.state).toBe("running");
    expect(inspection.processes).toContainEqual(leader);
    const receipt = await restarted.stopLease!(handle, { requestId: "stop-1" });
    expect(receipt).toMatchObject({ method: "environmentStopLease", requestId: "stop-1", pluginId: "builtin.local", providerLeaseId: handle.providerLeaseId, confirmed: true });
    for (const identity of [leader!, ...tree]) expect(await alive(identity)).toBe(false);
    expect((await result).signal ?? (await result).exitCode).not.toBe(0);
    expect(await readFile(join(workspace, "keep.txt"), "utf8")).toBe("kept");
    expect(JSON.parse(await readFile(join(root, "control", "stopped.json"), "utf8"))).toMatchObject({ requestId: "stop-1", confirmed: true });
    expect((await restarted.inspect!(handle)).state).toBe("stopped");
    await expect(run(restarted, handle, ["true"]).result).rejects.toMatchObject({ code: "provider_sandbox_stopped" });

    await expect(restarted.resume!(handle, { ...allocation.identity, fingerprint: `${allocation.identity.fingerprint}x` })).rejects.toMatchObject({
      code: "provider_identity_mismatch",
    });
    expect((await restarted.inspect!(handle)).state).toBe("stopped");
    expect(await restarted.resume!(handle, allocation.identity)).toEqual(allocation.identity);
    expect((await run(restarted, handle, ["true"]).result).exitCode).toBe(0);
  });

  it("R-EX-3 resume drains old activity before it reopens admission", async () => {
    const { p, allocation, handle } = await acquired();
    let leader: ProcessIdentity | null = null;
    const { result, output } = run(p, handle, ["sh", "-c", "echo ready; sleep 1000"], { onStart: (i) => void (leader = i) });
    await until(async () => leader !== null && output.stdout.includes("ready"));
    // A stop marker written by hand (an external console stop) with the agent still running.
    await writeFile(join(instanceRoot, "sandboxes", handle.providerLeaseId, "control", "stopped.json"), JSON.stringify({ schema: "copyback.local-stopped.v1", requestId: "x", stoppedAt: new Date().toISOString(), confirmed: false }));
    expect(await p.resume!(handle, allocation.identity)).toEqual(allocation.identity);
    expect(await alive(leader!)).toBe(false);
    await result;
    expect((await p.inspect!(handle)).state).toBe("running");
  });

  it("a replaced workspace directory does not resume", async () => {
    const { p, allocation, handle, workspace } = await acquired();
    await p.stopLease!(handle, { requestId: "s" });
    // Moved aside (not deleted) so the new directory cannot get the old one's inode.
    await rename(workspace, `${workspace}.old`);
    await mkdir(workspace, { mode: 0o700 });
    await expect(p.resume!(handle, allocation.identity)).rejects.toMatchObject({ code: "provider_identity_mismatch" });
    // Deleted and made again, even when the inode number comes straight back.
    const second = await acquired(p);
    await p.stopLease!(second.handle, { requestId: "s" });
    await rm(second.workspace, { recursive: true });
    await mkdir(second.workspace, { mode: 0o700 });
    await expect(p.resume!(second.handle, second.allocation.identity)).rejects.toMatchObject({ code: "provider_identity_mismatch" });
  });

  it("destroy stops the processes and removes the sandbox; it is idempotent", async () => {
    const { p, handle, root } = await acquired();
    let leader: ProcessIdentity | null = null;
    const { result, output } = run(p, handle, ["sh", "-c", "sleep 1000 & echo ready; wait"], { onStart: (i) => void (leader = i) });
    await until(async () => leader !== null && output.stdout.includes("ready"));
    const tree = await descendants(leader!.pid);
    await p.destroy!(handle);
    await result;
    for (const identity of [leader!, ...tree]) expect(await alive(identity)).toBe(false);
    await expect(lstat(root)).rejects.toMatchObject({ code: "ENOENT" });
    await p.destroy!(handle);
    expect(await p.inspect!(handle)).toEqual({ state: "missing", identity: null, processes: [] });
    expect((await readdir(join(instanceRoot, "sandboxes"))).filter((n) => n.includes(handle.providerLeaseId))).toEqual([]);
  });
});
