// The `local` provider (DESIGN.md section 4): a sandbox is a directory under the instance root,
// owned by its lease; the agent is a real process group in it, isolated with bubblewrap where
// that works. Files are never shared between leases: an existing directory is only ever taken
// back by the lease whose identity file it holds.
import { randomBytes } from "node:crypto";
import { constants, createWriteStream } from "node:fs";
import { lstat, mkdir, open, readdir, realpath, rename, rm, rmdir } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { UnsafeArchiveError } from "../../copyback/archive/errors";
import { errnoOf } from "../../errors";
import { emptyDirectory, extractValidatedArchive } from "../../copyback/archive/extract";
import { exportWorkspaceArchive } from "../../copyback/archive/export";
import { DEFAULT_SPOOL_MEMORY_BYTES } from "../../copyback/archive/spool";
import { workspaceBytesAtLeast } from "../../copyback/archive/workspace-walk";
import { compileExclude } from "../../copyback/manifest/exclude";
import { exportDeltaArchive } from "../../copyback/delta/export-delta";
import { exportSalvageArchive, SALVAGE_INFO_MESSAGE } from "../../copyback/archive/salvage";
import { validateArchive } from "../../copyback/archive/validate";
import { DomainError } from "../../errors";
import {
  PROVIDER_CAPABILITIES,
  type AcquireRequest,
  type Allocation,
  type DeltaExport,
  type DeltaExportRequest,
  type EnvironmentProvider,
  type ExecRequest,
  type ExecResult,
  type ExportOptions,
  type ExportStream,
  type Inspection,
  type LeaseHandle,
  type MeasureRequest,
  type PlacedInputs,
  type SandboxIdentity,
  type SandboxInput,
  type SandboxMeasurement,
  type SandboxSentinel,
  type StopReceipt,
  type StopRequest,
} from "../types";
import { usableBubblewrap } from "./bubblewrap";
import { parseLocalConfig } from "./config";
import { hostSearchPath } from "./env";
import { checkExecRequest } from "./exec-environment";
import { localExec } from "./local-exec";
import { KILL_GRACE_MS, recordState, terminateRecords } from "./process-group";
import { checkLeaseId, providerLeaseIdOf, sandboxesDir, sandboxLayout, type SandboxLayout } from "./sandbox-layout";
import {
  exists,
  readProcesses,
  readRecord,
  removeRecord,
  sandboxIdentityRecord,
  sandboxSentinelRecord,
  stoppedMarker,
  updateProcesses,
  writeRecord,
  type SandboxIdentityRecord,
} from "./sandbox-records";
import { placeLocalInputs, removeInputs } from "./sandbox-inputs";
import { measureTree } from "./sandbox-size";
import { readStatCache, recordSeedStatCache, removeStatCache, writeStatCache } from "./stat-cache";

export type LocalIsolation = "auto" | "bubblewrap" | "none";

export interface LocalProviderOptions {
  instanceRoot: string;
  pluginId?: string;
  /** "auto" (default): bubblewrap when it works here; "none": a plain process group; "bubblewrap": required. */
  isolation?: LocalIsolation;
  /** PATH for agents and for finding bwrap (default: the controller's PATH). */
  searchPath?: string;
  /** SIGTERM to SIGKILL (default 2 s). */
  killGraceMs?: number;
}

const foreign = (what: string) =>
  new DomainError("conflict", "provider_sandbox_foreign", `The sandbox directory ${what} does not belong to this lease; it is left alone.`);
const missing = (leaseId: string) => new DomainError("not_found", "provider_sandbox_missing", `The sandbox of lease ${leaseId} does not exist.`);

export function createLocalProvider(options: LocalProviderOptions): EnvironmentProvider {
  const pluginId = options.pluginId ?? "builtin.local";
  const isolation = options.isolation ?? "auto";
  const searchPath = options.searchPath ?? hostSearchPath();
  const graceMs = options.killGraceMs ?? KILL_GRACE_MS;
  let rootPromise: Promise<string> | undefined;
  /** Rehearsal faults armed per lease at acquisition (config `faults.failExports`), in this process. */
  const failExports = new Map<string, number>();

  function rehearsedExportFailure(lease: LeaseHandle): void {
    const left = failExports.get(lease.leaseId) ?? 0;
    if (left <= 0) return;
    failExports.set(lease.leaseId, left - 1);
    throw new DomainError("unavailable", "provider_fault_injected", `Rehearsal: injected export failure of lease ${lease.leaseId} (${left - 1} left).`);
  }

  /** The real instance root, with its sandboxes directory (0700, a real directory). */
  function instanceRoot(): Promise<string> {
    rootPromise ??= (async () => {
      await mkdir(options.instanceRoot, { recursive: true, mode: 0o700 });
      const root = await realpath(options.instanceRoot);
      await mkdir(sandboxesDir(root), { mode: 0o700 }).catch((error) => {
        if (errnoOf(error) !== "EEXIST") throw error;
      });
      const stats = await lstat(sandboxesDir(root));
      if (!stats.isDirectory()) throw foreign(sandboxesDir(root));
      return root;
    })();
    rootPromise.catch(() => (rootPromise = undefined));
    return rootPromise;
  }

  async function bubblewrapFor(mode: "bubblewrap" | "none"): Promise<string | null> {
    if (mode === "none") return null;
    const bwrap = await usableBubblewrap(searchPath);
    // Never run unisolated what was allocated (and shown) as isolated.
    if (!bwrap) throw new DomainError("unavailable", "provider_isolation_unavailable", "bubblewrap is not available on this host.");
    return bwrap;
  }

  async function chooseIsolation(): Promise<"bubblewrap" | "none"> {
    if (isolation === "none") return "none";
    const bwrap = await usableBubblewrap(searchPath);
    if (bwrap) return "bubblewrap";
    if (isolation === "bubblewrap") throw new DomainError("unavailable", "provider_isolation_unavailable", "bubblewrap is not available on this host.");
    return "none";
  }

  async function fingerprintOf(layout: SandboxLayout, record: SandboxIdentityRecord): Promise<SandboxIdentity> {
    // Device and inode name the directory; its birth time tells a directory deleted and made again
    // (which may get the same inode back at once) from the original; the nonce names the allocation.
    const stats = await lstat(layout.workspace, { bigint: true }).catch(() => null);
    const where = stats?.isDirectory() ? `${stats.dev}:${stats.ino}:${stats.birthtimeNs}` : "missing";
    return { providerLeaseId: record.providerLeaseId, fingerprint: `${where}:${record.nonce}` };
  }

  /** The sandbox of a lease handle, after checking that it is this plugin's and this lease's. */
  async function openSandbox(lease: LeaseHandle): Promise<{ layout: SandboxLayout; record: SandboxIdentityRecord; root: string }> {
    if (lease.pluginId !== pluginId) {
      throw new DomainError("conflict", "provider_plugin_mismatch", `Lease ${lease.leaseId} belongs to plugin ${lease.pluginId}, not ${pluginId}.`);
    }
    checkLeaseId(lease.leaseId);
    if (lease.providerLeaseId !== providerLeaseIdOf(lease.leaseId)) {
      throw new DomainError("conflict", "provider_identity_mismatch", `Lease ${lease.leaseId} does not name its own sandbox.`);
    }
    const root = await instanceRoot();
    const layout = sandboxLayout(root, lease.providerLeaseId);
    const stats = await lstat(layout.root).catch((error) => {
      if (errnoOf(error) === "ENOENT") return null;
      throw error;
    });
    if (!stats) throw missing(lease.leaseId);
    if (!stats.isDirectory()) throw foreign(layout.root);
    const record = await readRecord(layout.identityFile, sandboxIdentityRecord);
    if (!record || record.leaseId !== lease.leaseId || record.providerLeaseId !== lease.providerLeaseId || record.pluginId !== pluginId) {
      throw foreign(layout.root);
    }
    return { layout, record, root };
  }

  async function realWorkspace(layout: SandboxLayout): Promise<void> {
    const stats = await lstat(layout.workspace).catch(() => null);
    if (!stats?.isDirectory()) throw new DomainError("conflict", "provider_identity_mismatch", "The sandbox workspace is not a directory any more.");
  }

  async function acquire(request: AcquireRequest): Promise<Allocation> {
    checkLeaseId(request.leaseId);
    const config = parseLocalConfig(request.config);
    if (config.faults && !failExports.has(request.leaseId)) failExports.set(request.leaseId, config.faults.failExports);
    const mode = await chooseIsolation();
    const root = await instanceRoot();
    const providerLeaseId = providerLeaseIdOf(request.leaseId);
    const layout = sandboxLayout(root, providerLeaseId);

    /** The same lease acquiring again (a lost reply) gets its own sandbox back; anyone else is refused. */
    const adopt = async (): Promise<Allocation> => {
      const stats = await lstat(layout.root);
      if (!stats.isDirectory()) throw foreign(layout.root);
      const record = await readRecord(layout.identityFile, sandboxIdentityRecord).catch(() => null);
      const ours =
        record?.leaseId === request.leaseId &&
        record.providerLeaseId === providerLeaseId &&
        record.pluginId === pluginId &&
        record.companyId === request.companyId &&
        record.environmentId === request.environmentId &&
        record.runId === request.runId;
      if (!record || !ours) throw foreign(layout.root);
      return { identity: await fingerprintOf(layout, record), isolated: record.isolation === "bubblewrap" };
    };
    if (await exists(layout.root)) return adopt();

    // Built aside and renamed into place: a crash never leaves a half-made sandbox under the lease's name.
    const staging = join(sandboxesDir(root), `.acquire-${providerLeaseId}-${randomBytes(6).toString("hex")}`);
    const staged = sandboxLayout(root, "");
    const inStaging = (path: string) => join(staging, path.slice(staged.root.length));
    const record: SandboxIdentityRecord = {
      schema: "copyback.local-sandbox.v1",
      leaseId: request.leaseId,
      providerLeaseId,
      pluginId,
      companyId: request.companyId,
      environmentId: request.environmentId,
      runId: request.runId,
      nonce: randomBytes(16).toString("hex"),
      isolation: mode,
      allowNetwork: config.allowNetwork,
      limits: config.limits,
      createdAt: new Date().toISOString(),
    };
    try {
      await mkdir(staging, { mode: 0o700 });
      for (const dir of [staged.workspace, staged.control, staged.agentDir]) await mkdir(inStaging(dir), { mode: 0o700 });
      await writeRecord(inStaging(staged.identityFile), record, { exclusive: true });
      if (await exists(layout.root)) throw Object.assign(new Error("raced"), { code: "EEXIST" });
      await rename(staging, layout.root);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      if (errnoOf(error) === "EEXIST" || errnoOf(error) === "ENOTEMPTY") return adopt();
      throw error;
    }
    return { identity: await fingerprintOf(layout, record), isolated: mode === "bubblewrap" };
  }

  async function exec(lease: LeaseHandle, request: ExecRequest): Promise<ExecResult> {
    checkExecRequest(request);
    const { layout, record, root } = await openSandbox(lease);
    const bwrap = await bubblewrapFor(record.isolation);
    return localExec({ layout, identity: record, instanceRoot: root, searchPath, bwrap, graceMs }, request);
  }

  function withAbort(stream: NodeJS.ReadableStream, signal?: AbortSignal): Readable {
    const readable = stream as Readable;
    if (signal) {
      const onAbort = () => readable.destroy(signal.reason instanceof Error ? signal.reason : new Error("The export was aborted."));
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener("abort", onAbort, { once: true });
        readable.once("close", () => signal.removeEventListener("abort", onAbort));
      }
    }
    return readable;
  }

  async function exportWorkspace(lease: LeaseHandle, opts: ExportOptions = {}): Promise<Readable> {
    const { layout } = await openSandbox(lease);
    rehearsedExportFailure(lease);
    await realWorkspace(layout);
    // Excluded trees are neither exported nor validated; hard-linked files travel as ordinary
    // bytes (validation refuses hard-link entries), so only unsafe links need the salvage export.
    const exclude = opts.exclude ? [...opts.exclude] : undefined;
    // For a receive in this process (singleReceiver): a lower bound of the archive's size,
    // counted only up to the spool's memory bound, so a large one is spooled to disk from its
    // first byte (ExportStream.expectedBytes), and its buffers recycled once that receive is done.
    const expectedBytes =
      opts.singleReceiver === true ? await workspaceBytesAtLeast(layout.workspace, compileExclude(exclude), DEFAULT_SPOOL_MEMORY_BYTES) : undefined;
    const archive = exportWorkspaceArchive(layout.workspace, { exclude, hardLinks: "copy", recycleBuffers: opts.singleReceiver === true });
    const stream: ExportStream = withAbort(archive, opts.signal);
    if (expectedBytes !== undefined) stream.expectedBytes = expectedBytes;
    return stream;
  }

  /**
   * Capability `exportDelta`: the workspace scanned with the seed's stat cache (only files whose
   * stat changed are read), the entries that differ from the host's baseline sent as a tar with
   * the complete snapshot manifest; exclusions left out exactly as by exportWorkspace. A rehearsed
   * export failure fails it like any export (one per copyback try). The scan's newer cache is kept.
   */
  async function exportDelta(lease: LeaseHandle, request: DeltaExportRequest): Promise<DeltaExport> {
    const { layout } = await openSandbox(lease);
    rehearsedExportFailure(lease);
    await realWorkspace(layout);
    const { cache, state } = await readStatCache(layout.statCacheFile);
    const delta = await exportDeltaArchive(layout.workspace, request.baseline, {
      ...(request.exclude ? { exclude: [...request.exclude] } : {}),
      ...(cache ? { cache } : {}),
    });
    // The scan returns the cache it was given when every record still held: nothing to write.
    // An accelerator only: a cache that cannot be written (a full disk) leaves the old one, whose
    // records still hold only while each file's stat does, and never fails the export.
    if (delta.cache !== cache) await writeStatCache(layout.statCacheFile, delta.cache).catch(() => undefined);
    return {
      manifest: delta.manifest,
      archive: delta.archive ? withAbort(delta.archive, request.signal) : null,
      report: { changed: delta.changed.length, removed: delta.removed.length, hashedFiles: delta.hashedFiles, hashedBytes: delta.hashedBytes, statCache: state },
    };
  }

  async function salvageExport(lease: LeaseHandle, opts: ExportOptions = {}): Promise<{ archive: Readable; message: string }> {
    const { layout } = await openSandbox(lease);
    rehearsedExportFailure(lease);
    await realWorkspace(layout);
    const archive = exportSalvageArchive(layout.workspace, { exclude: opts.exclude ? [...opts.exclude] : undefined });
    return { archive: withAbort(archive, opts.signal), message: SALVAGE_INFO_MESSAGE };
  }

  /**
   * Replaces the workspace's contents with a validated archive (a reused sandbox is seeded again
   * from the host). A rejected archive changes nothing: a non-empty workspace is emptied only
   * after the archive was validated; an empty one is extracted in a single validating pass.
   */
  async function seedWorkspace(lease: LeaseHandle, archive: Readable): Promise<void> {
    const { layout } = await openSandbox(lease);
    await realWorkspace(layout);
    // Files are not swapped under a running agent.
    const states = await Promise.all((await readProcesses(layout.processesFile)).map((r) => recordState(r)));
    if (states.some((state) => state !== "dead")) {
      throw new DomainError("conflict", "provider_sandbox_busy", `Processes of lease ${lease.leaseId} are still running; the workspace is not replaced.`);
    }
    // The old stat cache describes files about to be replaced: gone before anything changes.
    await removeStatCache(layout.statCacheFile);
    // R-RC-5: an earlier run's inputs are not this run's (placeInputs gives a run its own, after the seed).
    await removeInputs(layout);
    // Validation reads a file twice (validate, then extract what was validated): spool it privately.
    const file = join(layout.control, `seed-${randomBytes(6).toString("hex")}.tar`);
    const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await pipeline(archive, createWriteStream("", { fd: handle.fd, autoClose: false }));
      await handle.close();
      if ((await readdir(layout.workspace)).length > 0) {
        const verdict = await validateArchive(file);
        if (verdict.kind === "rejected") throw new UnsafeArchiveError(verdict.violations);
        await emptyDirectory(layout.workspace);
      }
      await extractValidatedArchive(file, layout.workspace);
      // The delta export's stat cache, while nothing else can write the workspace.
      await recordSeedStatCache(layout.workspace, layout.statCacheFile);
    } catch (error) {
      if (error instanceof UnsafeArchiveError) {
        throw new DomainError("invalid", "provider_seed_archive_unsafe", "The seed archive was refused.", { violations: error.violations });
      }
      throw error;
    } finally {
      await handle.close().catch(() => undefined);
      await rm(file, { force: true });
    }
  }

  /** R-RC-5 (capability `placeInputs`): sandbox-inputs.ts; not under a running agent, like a seed. */
  async function placeInputs(lease: LeaseHandle, inputs: readonly SandboxInput[]): Promise<PlacedInputs> {
    const { layout, record } = await openSandbox(lease);
    await realWorkspace(layout);
    const states = await Promise.all((await readProcesses(layout.processesFile)).map((r) => recordState(r)));
    if (states.some((state) => state !== "dead")) {
      throw new DomainError("conflict", "provider_sandbox_busy", `Processes of lease ${lease.leaseId} are still running; its inputs are not replaced.`);
    }
    return placeLocalInputs(layout, inputs, record.isolation === "bubblewrap");
  }

  /**
   * Capability `measureSandbox` (sandbox-size.ts): the whole sandbox directory and its workspace
   * in one lstat walk, links never followed, within the budget (a lower bound past it).
   */
  async function measureSandbox(lease: LeaseHandle, request: MeasureRequest): Promise<SandboxMeasurement> {
    const { layout } = await openSandbox(lease);
    await realWorkspace(layout);
    const measured = await measureTree(layout.root, { budget: request.budget, part: layout.workspace, ...(request.signal ? { signal: request.signal } : {}) });
    return { workspace: measured.part, sandbox: measured.total, lowerBound: measured.lowerBound };
  }

  /** Stops every recorded process group; true when none of them is known to run any more. */
  async function stopRecorded(layout: SandboxLayout): Promise<boolean> {
    const records = await readProcesses(layout.processesFile);
    const states = await terminateRecords(records, graceMs);
    const stopped = new Set(records.filter((_, i) => states[i] === "dead").map((r) => r.execId));
    if (stopped.size > 0) await updateProcesses(layout.processesFile, (list) => list.filter((r) => !stopped.has(r.execId)));
    return states.every((s) => s === "dead");
  }

  async function stopLease(lease: LeaseHandle, request: StopRequest): Promise<StopReceipt> {
    const { layout } = await openSandbox(lease);
    // The marker goes first: no new exec starts while the running ones are stopped.
    await writeRecord(layout.stoppedFile, { schema: "copyback.local-stopped.v1", requestId: request.requestId, stoppedAt: new Date().toISOString(), confirmed: false });
    const confirmed = await stopRecorded(layout);
    const stoppedAt = new Date().toISOString();
    await writeRecord(layout.stoppedFile, { schema: "copyback.local-stopped.v1", requestId: request.requestId, stoppedAt, confirmed });
    return { method: "environmentStopLease", requestId: request.requestId, pluginId, providerLeaseId: lease.providerLeaseId, confirmed, stoppedAt };
  }

  /**
   * The verified lifecycle (R-EX-3): drain old activity (every recorded process group is stopped;
   * one that survives refuses the resume), verify the saved workspace identity, and only then
   * reopen admission (the stopped marker is what local-exec refuses to start under).
   */
  async function resume(lease: LeaseHandle, expected: SandboxIdentity): Promise<SandboxIdentity> {
    const { layout, record } = await openSandbox(lease);
    if (!(await stopRecorded(layout))) {
      throw new DomainError("unavailable", "provider_processes_alive", `Old processes of lease ${lease.leaseId} could not be stopped; the sandbox is not reopened.`);
    }
    const current = await fingerprintOf(layout, record);
    if (current.providerLeaseId !== expected.providerLeaseId || current.fingerprint !== expected.fingerprint) {
      throw new DomainError("conflict", "provider_identity_mismatch", `The sandbox of lease ${lease.leaseId} is not the one that was stopped.`, {
        expected: expected.fingerprint,
      });
    }
    await removeRecord(layout.stoppedFile);
    return current;
  }

  /** R-DT-2: written once into a new sandbox, next to (never inside) its workspace. */
  async function writeWorkspaceSentinel(lease: LeaseHandle, sentinel: SandboxSentinel): Promise<void> {
    const { layout } = await openSandbox(lease);
    const parsed = sandboxSentinelRecord.safeParse(sentinel);
    if (!parsed.success || sentinel.leaseId !== lease.leaseId || sentinel.providerLeaseId !== lease.providerLeaseId) {
      throw new DomainError("invalid", "provider_sentinel_invalid", `The sentinel does not belong to lease ${lease.leaseId}.`);
    }
    try {
      await writeRecord(layout.sentinelFile, parsed.data, { exclusive: true });
    } catch (error) {
      if (errnoOf(error) === "EEXIST") throw new DomainError("conflict", "provider_sentinel_exists", `The sandbox of lease ${lease.leaseId} already has a sentinel.`);
      throw error;
    }
  }

  async function readWorkspaceSentinel(lease: LeaseHandle): Promise<SandboxSentinel | null> {
    const { layout } = await openSandbox(lease);
    return readRecord(layout.sentinelFile, sandboxSentinelRecord);
  }

  async function removeTree(path: string): Promise<void> {
    await emptyDirectory(path);
    await rmdir(path);
  }

  async function destroy(lease: LeaseHandle): Promise<void> {
    let opened;
    try {
      opened = await openSandbox(lease);
    } catch (error) {
      if (error instanceof DomainError && error.code === "provider_sandbox_missing") opened = null;
      else throw error;
    }
    const root = await instanceRoot();
    if (opened) {
      if (!(await stopRecorded(opened.layout))) {
        throw new DomainError("unavailable", "provider_processes_alive", `Processes of lease ${lease.leaseId} could not be stopped; the sandbox is kept.`);
      }
      // Renamed away first, so a crash while deleting leaves trash, not a half sandbox.
      await rename(opened.layout.root, join(sandboxesDir(root), `.trash-${lease.providerLeaseId}-${randomBytes(6).toString("hex")}`));
    }
    for (const name of await readdir(sandboxesDir(root))) {
      if (name.startsWith(`.trash-${lease.providerLeaseId}-`)) await removeTree(join(sandboxesDir(root), name));
    }
  }

  async function inspect(lease: LeaseHandle): Promise<Inspection> {
    let opened;
    try {
      opened = await openSandbox(lease);
    } catch (error) {
      if (error instanceof DomainError && error.code === "provider_sandbox_missing") return { state: "missing", identity: null, processes: [] };
      if (error instanceof DomainError && (error.code === "provider_sandbox_foreign" || error.code === "provider_sandbox_record_invalid")) {
        return { state: "unknown", identity: null, processes: [] };
      }
      throw error;
    }
    const { layout, record } = opened;
    const stopped = await readRecord(layout.stoppedFile, stoppedMarker);
    const records = await readProcesses(layout.processesFile);
    return {
      state: stopped ? "stopped" : "running",
      identity: await fingerprintOf(layout, record),
      processes: records.flatMap((r) => (r.namespaceInit ? [r.leader, r.namespaceInit] : [r.leader])),
    };
  }

  return {
    pluginId,
    provider: "local",
    // R-DT-1: a local sandbox is never deleted behind the controller: no auto-delete policy to disable.
    capabilities: new Set(PROVIDER_CAPABILITIES.filter((c) => c !== "autoDeletePolicy")),
    acquire,
    exec,
    exportWorkspace,
    exportDelta,
    salvageExport,
    seedWorkspace,
    placeInputs,
    measureSandbox,
    stopLease,
    resume,
    destroy,
    inspect,
    writeWorkspaceSentinel,
    readWorkspaceSentinel,
  };
}
