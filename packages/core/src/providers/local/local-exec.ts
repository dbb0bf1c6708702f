// exec for the local provider: the agent's command as a real process group in the sandbox,
// recorded (PID and start time, R-OWN-12) in control/processes.json before onStart is told, so
// a restarted controller can still inspect and stop it. A timeout or an abort stops the whole
// group; when the command exits, what it left running in the background is killed, its output
// is drained, and its result file is read and removed.
import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { DomainError } from "../../errors";
import { readProcessIdentity } from "../../process/read-process-identity";
import type { ExecRequest, ExecResult } from "../types";
import { bubblewrapArgs, findOnPath } from "./bubblewrap";
import { createExecCgroups, joinCgroupsArgv, type ExecCgroups } from "./cgroups";
import { DEFAULT_RESOURCE_LIMITS, describeLimits, limitFromExit, planLimits, type LimitKind } from "./resource-limits";
import { agentEnvironment, resolveCwd } from "./exec-environment";
import { KILL_GRACE_MS, killLeftovers, recordState, terminateRecords } from "./process-group";
import { takeResultFile } from "./result-file";
import { inputsDirectoryOf } from "./sandbox-inputs";
import { packDirectoryOf } from "./sandbox-pack";
import type { SandboxLayout } from "./sandbox-layout";
import { exists, updateProcesses, type ProcessRecord, type SandboxIdentityRecord } from "./sandbox-records";
import { spawnGroup } from "./spawn-group";

export interface LocalExecContext {
  layout: SandboxLayout;
  identity: SandboxIdentityRecord;
  /** The real instance root (hidden inside bubblewrap). */
  instanceRoot: string;
  searchPath: string;
  /** The bwrap binary when the sandbox is isolated. */
  bwrap: string | null;
  graceMs?: number;
}

const stoppedError = () => new DomainError("conflict", "provider_sandbox_stopped", "The sandbox is stopped; resume it first.");

export async function localExec(ctx: LocalExecContext, request: ExecRequest): Promise<ExecResult> {
  const { layout } = ctx;
  const graceMs = ctx.graceMs ?? KILL_GRACE_MS;
  const base: ExecResult = { exitCode: null, signal: null, timedOut: false, cancelled: false, process: null, resultFile: null };
  if (await exists(layout.stoppedFile)) throw stoppedError();
  const cwd = await resolveCwd(layout.workspace, request.cwd);
  if (request.signal?.aborted) return { ...base, cancelled: true };
  // A result file left by an earlier exec must not be taken for this one's.
  await rm(layout.resultFile, { recursive: true, force: true });

  const env = agentEnvironment({ path: ctx.searchPath, workspace: layout.workspace, resultFile: layout.resultFile, extra: request.env });
  const isolated = ctx.bwrap !== null;
  // R-RC-5: placed inputs are seen at the path the agent was told, read-only.
  const inputsDir = await inputsDirectoryOf(layout);
  // R-PV-1: so is the placed agent pack (the verification read and the agent's command run it).
  const packDir = await packDirectoryOf(layout);
  const mounts = { instanceRoot: ctx.instanceRoot, workspace: layout.workspace, agentDir: layout.agentDir, inputsDir, packDir, cwd, allowNetwork: ctx.identity.allowNetwork };
  // Resource limits (resource-limits.ts): rlimits by prlimit inside the sandbox, memory and
  // process counts by this exec's own cgroups where writable (joined before anything starts).
  const limits = ctx.identity.limits ?? DEFAULT_RESOURCE_LIMITS;
  const prlimit = await findOnPath("prlimit", ctx.searchPath);
  const cgroups: ExecCgroups | null = await createExecCgroups({
    memoryBytes: limits.memoryMb === null ? null : limits.memoryMb * 1024 * 1024,
    processes: limits.processes,
  }).catch(() => null);
  const plan = planLimits(limits, { prlimit: prlimit !== null, memoryCgroup: cgroups?.memory ?? false, pidsCgroup: cgroups?.pids ?? false });
  const agentArgv = plan.prlimitArgs.length > 0 ? [prlimit as string, ...plan.prlimitArgs, "--", ...request.argv] : [...request.argv];
  const sandboxArgv = isolated ? [ctx.bwrap as string, ...bubblewrapArgs(mounts, agentArgv)] : agentArgv;
  const argv = cgroups ? joinCgroupsArgv(cgroups.joinFiles, sandboxArgv) : sandboxArgv;
  let group;
  try {
    group = await spawnGroup({ command: argv[0] as string, args: argv.slice(1), cwd, env, infoFd: isolated, onOutput: request.onOutput });
  } catch (error) {
    await cgroups?.remove();
    throw error;
  }

  // Stop requests may arrive before the group is recorded; they act once it is.
  let stopReason: "timeout" | "cancelled" | null = null;
  let recorded: (value: ProcessRecord | null) => void = () => undefined;
  const record = new Promise<ProcessRecord | null>((resolve) => (recorded = resolve));
  let stopping: Promise<unknown> = Promise.resolve();
  const stop = (reason: "timeout" | "cancelled") => {
    if (stopReason) return;
    stopReason = reason;
    stopping = record.then(async (r) => {
      if (r) await terminateRecords([r], graceMs);
      else {
        try {
          process.kill(-group.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    });
  };
  const timer = setTimeout(() => stop("timeout"), request.timeoutMs);
  const onAbort = () => stop("cancelled");
  request.signal?.addEventListener("abort", onAbort, { once: true });

  let current: ProcessRecord | null = null;
  try {
    const leader = await readProcessIdentity(group.pid);
    const initPid = await Promise.race([group.namespaceInitPid, group.exited.then(() => null)]);
    const namespaceInit = initPid === null ? null : await readProcessIdentity(initPid);
    current = leader ? { execId: randomUUID(), pgid: group.pid, leader, namespaceInit, startedAt: new Date().toISOString() } : null;
    try {
      if (current) {
        const entry = current;
        await updateProcesses(layout.processesFile, (list) => [...list, entry]);
      }
    } finally {
      recorded(current);
    }
    // A stop that raced with the start: the stopped marker now wins.
    if (await exists(layout.stoppedFile)) stop("cancelled");
    try {
      await request.onStart?.(leader);
    } catch (error) {
      stop("cancelled");
      await stopping;
      await group.exited;
      throw error;
    }

    const exit = await group.exited;
    clearTimeout(timer);
    await stopping;
    if (current) await killLeftovers(current, graceMs);
    // Output still held by an escaped process must not hold the run: wait a bounded time.
    await Promise.race([group.drained, sleep(graceMs)]);
    group.child.stdout?.destroy();
    group.child.stderr?.destroy();

    const reading = await takeResultFile(layout.resultFile);
    if (reading.kind === "refused") request.onOutput?.("stderr", `\ncopyback: ${reading.note}; it was ignored.\n`);
    const cgroupHits = (await cgroups?.hits()) ?? { memory: false, processes: false };
    const hit: LimitKind | null =
      limitFromExit(exit, plan.enforcement) ?? (cgroupHits.memory ? "memory" : cgroupHits.processes ? "processes" : null);
    return {
      resourceLimits: { summary: describeLimits(limits, plan.enforcement), enforcement: plan.enforcement, hit },
      exitCode: exit.code,
      signal: exit.signal,
      timedOut: stopReason === "timeout",
      cancelled: stopReason === "cancelled",
      process: leader,
      resultFile: reading.kind === "read" ? reading.text : null,
    };
  } catch (error) {
    recorded(current);
    stop("cancelled");
    await stopping;
    throw error;
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", onAbort);
    // Only an empty group can be removed; one still populated is swept by a later exec.
    await cgroups?.remove();
    // Forget the group only once nothing of it runs; otherwise stopLease still finds it.
    if (current && (await recordState(current)) === "dead") {
      const execId = current.execId;
      await updateProcesses(layout.processesFile, (list) => list.filter((r) => r.execId !== execId)).catch(() => undefined);
    }
  }
}
