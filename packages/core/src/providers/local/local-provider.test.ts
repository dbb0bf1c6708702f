// The local provider with real directories and real processes, once as a plain process group
// (isolation "none") and once as configured by default ("auto": bubblewrap where it works here,
// which the toolchain installs; a plain group otherwise, and the assertions follow `isolated`).
import { createWriteStream } from "node:fs";
import { access, lstat, mkdir, mkdtemp, readFile, readdir, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { afterAll, describe, expect, it } from "vitest";
import { receiveWorkspaceArchive } from "../../copyback/archive/receive";
import { pooledBlocks, takeBlock } from "../../copyback/archive/spool-memory";
import { encodeHeader } from "../../copyback/archive/tar-header";
import { validateArchive } from "../../copyback/archive/validate";
import { probeProcess, readProcessIdentity } from "../../process/read-process-identity";
import type { ProcessIdentity } from "../../process/process-identity";
import type { EnvironmentProvider, ExecRequest, ExportStream, LeaseHandle } from "../types";
import { usableBubblewrap } from "./bubblewrap";
import { hostSearchPath } from "./env";
import { createLocalProvider, type LocalIsolation } from "./local-provider";
import { MAX_RESULT_FILE_BYTES } from "./result-file";

const scratch = await mkdtemp(join(tmpdir(), "copyback-local-"));
afterAll(async () => rm(scratch, { recursive: true, force: true }));
const bubblewrapHere = (await usableBubblewrap(hostSearchPath())) !== null;

let counter = 0;
const nextLeaseId = () => `${Date.now().toString(36)}-${++counter}`;

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Every descendant of a process, by walking /proc's parent PIDs. */
async function descendants(pid: number): Promise<ProcessIdentity[]> {
  const parents = new Map<number, number>();
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const text = await readFile(`/proc/${name}/stat`, "utf8").catch(() => null);
    if (text) parents.set(Number(name), Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[1]));
  }
  const found: number[] = [];
  const visit = (p: number) => {
    for (const [child, parent] of parents) {
      if (parent !== p) continue;
      found.push(child);
      visit(child);
    }
  };
  visit(pid);
  return (await Promise.all(found.map((p) => readProcessIdentity(p)))).filter((x): x is ProcessIdentity => x !== null);
}

const alive = async (identity: ProcessIdentity) => (await probeProcess(identity)).kind === "alive";

// Real processes on a small, busy machine: generous limits, no timed assertions.
describe.each<LocalIsolation>(["none", "auto"])("local provider (isolation %s)", { timeout: 30_000 }, (isolation) => {
  const instanceRoot = join(scratch, `instance-${isolation}`);
  const provider = () => createLocalProvider({ instanceRoot, isolation, killGraceMs: 500 });
  const expectIsolated = isolation === "auto" && bubblewrapHere;

  async function acquired(p: EnvironmentProvider = provider(), config: unknown = {}) {
    const leaseId = nextLeaseId();
    const allocation = await p.acquire!({ companyId: "c", environmentId: "e", leaseId, runId: `run-${leaseId}`, config });
    const handle: LeaseHandle = { leaseId, pluginId: "builtin.local", providerLeaseId: allocation.identity.providerLeaseId };
    const root = join(instanceRoot, "sandboxes", handle.providerLeaseId);
    return { p, allocation, handle, root, workspace: join(root, "workspace") };
  }

  function run(p: EnvironmentProvider, handle: LeaseHandle, argv: string[], extra: Partial<ExecRequest> = {}) {
    const output = { stdout: "", stderr: "" };
    const result = p.exec!(handle, { argv, env: {}, timeoutMs: 60_000, onOutput: (s, c) => (output[s] += c), ...extra });
    return { result, output };
  }

  it("acquires a private sandbox directory with its own identity; the same lease gets it back", async () => {
    const { p, allocation, handle, root, workspace } = await acquired();
    expect(allocation.isolated).toBe(expectIsolated);
    expect(handle.providerLeaseId).toBe(`local-${handle.leaseId}`);
    expect((await stat(root)).mode & 0o777).toBe(0o700);
    expect((await stat(workspace)).mode & 0o777).toBe(0o700);
    const ws = await stat(workspace, { bigint: true });
    expect(allocation.identity.fingerprint).toMatch(new RegExp(`^${ws.dev}:${ws.ino}:${ws.birthtimeNs}:[0-9a-f]{32}$`));
    const again = await p.acquire!({ companyId: "c", environmentId: "e", leaseId: handle.leaseId, runId: `run-${handle.leaseId}`, config: {} });
    expect(again.identity).toEqual(allocation.identity);
    expect(await p.inspect!(handle)).toMatchObject({ state: "running", identity: allocation.identity, processes: [] });
  });

  it("never takes over a directory that another lease (or nobody) owns", async () => {
    const { p, handle, root } = await acquired();
    await expect(p.acquire!({ companyId: "c", environmentId: "other", leaseId: handle.leaseId, runId: "run-x", config: {} })).rejects.toMatchObject({
      code: "provider_sandbox_foreign",
    });
    const squatted = nextLeaseId();
    await mkdir(join(instanceRoot, "sandboxes", `local-${squatted}`));
    await expect(p.acquire!({ companyId: "c", environmentId: "e", leaseId: squatted, runId: "r", config: {} })).rejects.toMatchObject({ code: "provider_sandbox_foreign" });
    const outside = join(scratch, `outside-${isolation}`);
    await mkdir(outside, { recursive: true });
    const linked = nextLeaseId();
    await symlink(outside, join(instanceRoot, "sandboxes", `local-${linked}`));
    await expect(p.acquire!({ companyId: "c", environmentId: "e", leaseId: linked, runId: "r", config: {} })).rejects.toMatchObject({ code: "provider_sandbox_foreign" });
    const linkedHandle = { leaseId: linked, pluginId: "builtin.local", providerLeaseId: `local-${linked}` };
    await expect(p.destroy!(linkedHandle)).rejects.toMatchObject({ code: "provider_sandbox_foreign" });
    expect((await lstat(outside)).isDirectory()).toBe(true);
    expect((await readFile(join(root, "control", "identity.json"), "utf8")).includes(handle.leaseId)).toBe(true);
  });

  it("refuses a bad lease id or configuration and creates nothing", async () => {
    const p = provider();
    await expect(p.acquire!({ companyId: "c", environmentId: "e", leaseId: "../x", runId: "r", config: {} })).rejects.toMatchObject({ code: "provider_lease_id_invalid" });
    const leaseId = nextLeaseId();
    await expect(p.acquire!({ companyId: "c", environmentId: "e", leaseId, runId: "r", config: { allowNetwork: "yes" } })).rejects.toMatchObject({
      code: "provider_config_invalid",
    });
    expect(await readdir(join(instanceRoot, "sandboxes"))).not.toContain(`local-${leaseId}`);
  });

  it("runs the command in the workspace with a clean environment, streams UTF-8 output and returns the result file", async () => {
    const { p, handle, workspace, root } = await acquired();
    await mkdir(join(workspace, "sub"));
    process.env.COPYBACK_TEST_CONTROLLER_SECRET = "leak";
    let started: ProcessIdentity | null = null;
    let recorded = "";
    const script = [
      "echo made > made.txt",
      "pwd",
      'echo "home=$HOME lang=$LANG extra=$EXTRA secret=${COPYBACK_TEST_CONTROLLER_SECRET:-none}"',
      // An emoji split across two writes (and so two chunks): decoded whole.
      "printf '\\360\\237'; sleep 0.2; printf '\\230\\200\\n'",
      "echo oops >&2",
      'printf \'{"outcome":"done"}\' > "$COPYBACK_RESULT_FILE"',
      "exit 7",
    ].join("\n");
    const { result, output } = run(p, handle, ["sh", "-c", script], {
      cwd: "sub",
      env: { EXTRA: "yes" },
      onStart: async (identity) => {
        started = identity;
        recorded = await readFile(join(root, "control", "processes.json"), "utf8");
      },
    });
    const done = await result;
    delete process.env.COPYBACK_TEST_CONTROLLER_SECRET;
    expect(done).toMatchObject({ exitCode: 7, signal: null, timedOut: false, cancelled: false, resultFile: '{"outcome":"done"}' });
    expect(await readFile(join(workspace, "sub", "made.txt"), "utf8")).toBe("made\n");
    expect(output.stdout).toContain(`${join(workspace, "sub")}\n`);
    expect(output.stdout).toContain(`home=${workspace} lang=C.UTF-8 extra=yes secret=none`);
    expect(output.stdout).toContain("😀\n");
    expect(output.stdout).not.toContain("\ufffd");
    expect(output.stderr).toBe("oops\n");
    // R-OWN-12: onStart got the identity read from /proc, recorded before it was called.
    expect(started).not.toBeNull();
    expect(done.process).toEqual(started);
    expect(recorded).toContain(`"startTime": "${started!.startTime}"`);
    expect(await readdir(join(root, "control", "agent"))).toEqual([]);
    expect(JSON.parse(await readFile(join(root, "control", "processes.json"), "utf8")).processes).toEqual([]);
  });

  it("refuses a working directory outside the workspace or through a link, and starts nothing", async () => {
    const { p, handle, workspace } = await acquired();
    await symlink("/tmp", join(workspace, "out"));
    let started = false;
    const onStart = () => void (started = true);
    await expect(run(p, handle, ["touch", "x"], { cwd: "../control", onStart }).result).rejects.toMatchObject({ code: "exec_cwd_invalid" });
    await expect(run(p, handle, ["touch", "x"], { cwd: "out", onStart }).result).rejects.toMatchObject({ code: "exec_cwd_invalid" });
    expect(started).toBe(false);
  });

  it("a timeout kills the whole process group, background children included", async () => {
    const { p, handle } = await acquired();
    let leader: ProcessIdentity | null = null;
    const { result, output } = run(p, handle, ["sh", "-c", "sleep 1000 & sleep 1000 & echo ready; wait"], { timeoutMs: 60_000, onStart: (i) => void (leader = i) });
    await until(async () => leader !== null && output.stdout.includes("ready"));
    const tree = await descendants(leader!.pid);
    expect(tree.length).toBeGreaterThanOrEqual(2);
    // A second exec with a short timeout, so the first one's tree is known before it is killed.
    const short = await run(p, handle, ["sleep", "1000"], { timeoutMs: 200 }).result;
    expect(short).toMatchObject({ timedOut: true, cancelled: false, exitCode: expectIsolated ? expect.anything() : null });
    const abort = new AbortController();
    const second = run(p, handle, ["sh", "-c", "sleep 1000 & echo ready; wait"], { signal: abort.signal });
    await until(async () => second.output.stdout.includes("ready"));
    abort.abort();
    expect(await second.result).toMatchObject({ cancelled: true, timedOut: false });
    // The first one is still running (nothing stopped it); stop it through the sandbox.
    expect(await alive(tree[0]!)).toBe(true);
    const receipt = await p.stopLease!(handle, { requestId: "stop-t" });
    expect(receipt.confirmed).toBe(true);
    await result;
    for (const identity of tree) expect(await alive(identity)).toBe(false);
  });

  it("kills what the command left running in the background when it exits", async () => {
    const { p, handle, workspace } = await acquired();
    let leader: ProcessIdentity | null = null;
    const script = "sleep 1000 > /dev/null 2>&1 & echo ready; while [ ! -e go ]; do sleep 0.05; done";
    const { result, output } = run(p, handle, ["sh", "-c", script], { onStart: (i) => void (leader = i) });
    await until(async () => leader !== null && output.stdout.includes("ready"));
    const tree = await descendants(leader!.pid);
    expect(tree.length).toBeGreaterThan(0);
    await writeFile(join(workspace, "go"), "");
    expect((await result).exitCode).toBe(0);
    for (const identity of tree) expect(await alive(identity)).toBe(false);
  });

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

  it("R-DT-2 the sentinel is written once next to the workspace, never exported, and read back; none is a legacy allocation", async () => {
    const { p, allocation, handle, root, workspace } = await acquired();
    expect(await p.readWorkspaceSentinel!(handle)).toBeNull();
    const sentinel = {
      schema: "copyback.workspace-sentinel.v1" as const,
      runId: `run-${handle.leaseId}`,
      leaseId: handle.leaseId,
      providerLeaseId: handle.providerLeaseId,
      allocationFingerprint: allocation.identity.fingerprint,
      nonce: "ab".repeat(32),
      createdAt: new Date().toISOString(),
    };
    await p.writeWorkspaceSentinel!(handle, sentinel);
    expect(await p.readWorkspaceSentinel!(handle)).toEqual(sentinel);
    expect(JSON.parse(await readFile(join(root, "sentinel.json"), "utf8"))).toEqual(sentinel);
    await expect(p.writeWorkspaceSentinel!(handle, { ...sentinel, nonce: "cd".repeat(32) })).rejects.toMatchObject({ code: "provider_sentinel_exists" });
    await expect(p.writeWorkspaceSentinel!(handle, { ...sentinel, leaseId: "other" })).rejects.toMatchObject({ code: "provider_sentinel_invalid" });
    // Outside the exported tree: the workspace does not hold it.
    expect(await readdir(workspace)).toEqual([]);
  });

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

  it("issue 14: the export's buffers return to the pool after the receive only when the caller says it is the single receiver", async () => {
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

  it("refuses a result file over 1 MiB or behind a link, with a note on stderr", async () => {
    const { p, handle } = await acquired();
    const big = await run(p, handle, ["sh", "-c", `head -c ${MAX_RESULT_FILE_BYTES + 1} /dev/zero > "$COPYBACK_RESULT_FILE"`]);
    expect((await big.result).resultFile).toBeNull();
    expect(big.output.stderr).toContain("larger than 1048576 bytes");
    const exact = await run(p, handle, ["sh", "-c", `head -c ${MAX_RESULT_FILE_BYTES} /dev/zero | tr '\\0' a > "$COPYBACK_RESULT_FILE"`]).result;
    expect(exact.resultFile?.length).toBe(MAX_RESULT_FILE_BYTES);
    const linked = await run(p, handle, ["sh", "-c", 'echo secret > "$HOME/s"; ln -s "$HOME/s" "$COPYBACK_RESULT_FILE"']);
    expect((await linked.result).resultFile).toBeNull();
    expect(linked.output.stderr).toContain("symbolic link");
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

  it("isolation: the agent writes only its sandbox and sees no other sandbox and no network when bubblewrap runs it", async () => {
    const { p, handle, root } = await acquired();
    const other = await acquired();
    const outsideFile = join(scratch, `written-by-agent-${isolation}`);
    await run(p, handle, ["sh", "-c", `echo x > ${outsideFile}`]).result;
    // Inside bubblewrap /tmp is private: the write may succeed there, but never reaches the host.
    expect(await access(outsideFile).then(() => true, () => false)).toBe(!expectIsolated);
    // The provider's own records are out of reach too (the instance root is an empty tmpfs inside).
    await run(p, handle, ["sh", "-c", `echo x > ${join(root, "control", "forged.json")}`]).result;
    expect(await access(join(root, "control", "forged.json")).then(() => true, () => false)).toBe(!expectIsolated);
    const peek = await run(p, handle, ["ls", other.workspace]).result;
    expect(peek.exitCode !== 0).toBe(expectIsolated);
    const identity = await run(p, handle, ["cat", join(root, "control", "identity.json")]).result;
    expect(identity.exitCode !== 0).toBe(expectIsolated);
    const net = run(p, handle, ["cat", "/proc/net/dev"]);
    await net.result;
    const interfaces = net.output.stdout.split("\n").slice(2).filter((l) => l.includes(":")).map((l) => l.split(":")[0]!.trim());
    expect(interfaces.every((name) => name === "lo")).toBe(expectIsolated);
  });

  it("allowNetwork keeps the host's network inside bubblewrap", async () => {
    const { p, handle } = await acquired(provider(), { allowNetwork: true });
    const net = run(p, handle, ["cat", "/proc/net/dev"]);
    await net.result;
    const interfaces = net.output.stdout.split("\n").slice(2).filter((l) => l.includes(":")).map((l) => l.split(":")[0]!.trim());
    const host = (await readFile("/proc/net/dev", "utf8")).split("\n").slice(2).filter((l) => l.includes(":")).map((l) => l.split(":")[0]!.trim());
    expect(interfaces.sort()).toEqual(host.sort());
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

  it("R-EX-6 another local plugin on the same instance root cannot use this plugin's sandbox", async () => {
    const { handle, root } = await acquired();
    const other = createLocalProvider({ instanceRoot, isolation, pluginId: "acme.local" });
    const asOther = { ...handle, pluginId: "acme.local" };
    await expect(other.inspect!(asOther)).resolves.toMatchObject({ state: "unknown", identity: null });
    await expect(other.stopLease!(asOther, { requestId: "x" })).rejects.toMatchObject({ code: "provider_sandbox_foreign" });
    await expect(other.destroy!(asOther)).rejects.toMatchObject({ code: "provider_sandbox_foreign" });
    await expect(other.acquire!({ companyId: "c", environmentId: "e", leaseId: handle.leaseId, runId: `run-${handle.leaseId}`, config: {} })).rejects.toMatchObject({
      code: "provider_sandbox_foreign",
    });
    expect((await lstat(root)).isDirectory()).toBe(true);
  });

  it("refuses a lease handle of another plugin or naming another sandbox", async () => {
    const { p, handle } = await acquired();
    await expect(p.inspect!({ ...handle, pluginId: "acme.local" })).rejects.toMatchObject({ code: "provider_plugin_mismatch" });
    await expect(p.exec!({ ...handle, providerLeaseId: "local-other" }, { argv: ["true"], env: {}, timeoutMs: 1000 })).rejects.toMatchObject({
      code: "provider_identity_mismatch",
    });
  });
});
