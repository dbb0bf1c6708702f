// The two-host mode's rules (`--hosts 2`, issue 23 part 3): two instance roots with distinct host
// ids share one PostgreSQL, and each host-local thing (a host workspace, a `local` sandbox) must be
// touched only by its own host's processes. Judged from what the processes themselves wrote into
// the history (the workers' trace: each lock section, claim and handled sweep unit with its PID;
// the harness's worker.start lines say which host each PID is) and from the final state (which
// host each task's workspace and each lease is bound to, where each sandbox lies, which runs wrote
// each host file). A dead host (`kill_host`) is judged from the same lines: nothing of its is
// claimed while it is down, and its runs are not left behind once it is back. Pure.
import type { HistoryEvent } from "../history";
import type { FinalState } from "./final-state";
import { happened, type Operation } from "./operations";
import type { Violation, ViolationKind } from "./verdict";

/** Which host touches what, besides the final state's other fields (collect.ts; absent with one host). */
export interface FinalHosts {
  hosts: { id: string; home: string; workspaces: string[] }[];
  /** Run id -> the host id its task's execution workspace is bound to (null: unbound). */
  runHost: Record<string, string | null>;
  /**
   * Run id -> its task's workspace's host path (absent: no workspace). A workspace lying under one
   * host's root is that host's whatever its row says: an unbound one (world.ts `torture-unbound`)
   * claimed by another host is a wrong-host claim even once that claim bound it there. Optional:
   * final states written before this field judge by the binding alone.
   */
  runWorkspace?: Record<string, string>;
  /** The claims the database recorded (activity `run.started`): the host id each claim named. */
  claims: { runId: string; hostId: string | null }[];
  /** Local leases: their host id and the instance roots (host ids) whose sandboxes/ hold a directory of theirs. */
  leases: { leaseId: string; hostId: string | null; sandboxOn: string[] }[];
}

export interface HostCounts {
  /** Trace lines attributed to a host: claims, lock sections, sweep units. */
  claimsTraced: number;
  sweepUnitsTraced: number;
  /** kill_host faults that took effect, and the host returns. */
  hostKills: number;
  hostReturns: number;
  /** Runs queued when their host returned from the dead, then claimed by it (the wait the rule is about). */
  waitedForDeadHost: number;
}

/** The sweeps whose units are copybacks (judged as finalizations) and lease releases/destroys (cleanups). */
const FINALIZING = new Set(["finalization", "historical_unsafe"]);
const CLEANING = new Set(["lease_cleanup", "settled_run_leases"]);

/** Each PID's host over time: a PID is the worker the latest worker.start at or before `t` names. */
function pidHosts(history: readonly HistoryEvent[]): (pid: unknown, t: bigint) => string | null {
  const starts = new Map<number, { t: bigint; host: string }[]>();
  for (const e of history) {
    if (e.ev !== "worker.start" || typeof e.hostId !== "string") continue;
    const list = starts.get(Number(e.pid)) ?? [];
    list.push({ t: BigInt(e.t), host: e.hostId });
    starts.set(Number(e.pid), list);
  }
  return (pid, t) => {
    let host: string | null = null;
    for (const s of starts.get(Number(pid)) ?? []) if (s.t <= t) host = s.host;
    return host;
  };
}

/** The host whose instance root or one of whose workspaces holds `target` (a path), if any. */
function hostOfPath(hosts: FinalHosts["hosts"], target: string): string | null {
  const under = (root: string) => target === root || target.startsWith(`${root}/`);
  for (const h of hosts) if (h.workspaces.some(under)) return h.id;
  for (const h of hosts) if (under(h.home)) return h.id;
  return null;
}

/**
 * A SIGKILL sent to a process running on the other core lands within microseconds, not at once: a
 * trace line its last instructions wrote just after the kill's completion is not a claim while dead.
 */
const KILL_LANDING_NS = 100_000_000n;

/** Each host's dead windows: from a kill_host that took effect (and KILL_LANDING_NS) to the next host.return invoked (open: to the end). */
export function deadWindows(operations: readonly Operation[]): Map<string, { from: bigint; to: bigint | null }[]> {
  const out = new Map<string, { from: bigint; to: bigint | null }[]>();
  for (const op of operations) {
    const host = String(op.value.host);
    if (op.f === "fault" && op.value.kind === "kill_host" && happened(op) && op.completedAt !== null) {
      const list = out.get(host) ?? [];
      list.push({ from: op.completedAt + KILL_LANDING_NS, to: null });
      out.set(host, list);
    } else if (op.f === "host.return") {
      const open = (out.get(host) ?? []).find((w) => w.to === null);
      if (open) open.to = op.invokedAt;
    }
  }
  return out;
}

export function hostViolations(history: readonly HistoryEvent[], operations: readonly Operation[], final: FinalState): { violations: Violation[]; counts: HostCounts } {
  const violations: Violation[] = [];
  const counts: HostCounts = { claimsTraced: 0, sweepUnitsTraced: 0, hostKills: 0, hostReturns: 0, waitedForDeadHost: 0 };
  const hosts = final.hosts;
  if (!hosts) return { violations, counts };
  const add = (kind: ViolationKind, detail: string, runId?: string) => violations.push({ kind, detail, ...(runId ? { runId } : {}) });
  const hostAt = pidHosts(history);
  const runHost = (runId: unknown) => (typeof runId === "string" ? (hosts.runHost[runId] ?? null) : null);
  /** The host whose root holds the run's workspace directory, when that is not the host the workspace ended bound to. */
  const misplaced = (runId: unknown): string | null => {
    const dir = typeof runId === "string" ? hosts.runWorkspace?.[runId] : undefined;
    const place = dir === undefined ? null : hostOfPath(hosts.hosts, dir);
    return place !== null && place !== runHost(runId) ? place : null;
  };
  const leaseHost = new Map(hosts.leases.map((l) => [l.leaseId, l.hostId]));
  const windows = deadWindows(operations);
  const deadAt = (host: string | null, t: bigint) => host !== null && (windows.get(host) ?? []).some((w) => w.from <= t && (w.to === null || t < w.to));
  /** Claims by run, from the trace: when and by which host. */
  const claimsOf = new Map<string, { t: bigint; host: string | null }[]>();

  for (const e of history) {
    const t = BigInt(e.t);
    if (e.ev === "merge.enter") {
      const by = hostAt(e.pid, t);
      const place = hostOfPath(hosts.hosts, String(e.target));
      if (by !== null && place !== null && by !== place) add("cross_host_write", `pid ${e.pid} of host ${by} entered the lock of ${e.target} (host ${place}) for run ${e.runId} at t=${e.t}`, (e.runId as string) ?? undefined);
      const bound = runHost(e.runId);
      if (by !== null && bound !== null && by !== bound) add("wrong_host_finalize", `pid ${e.pid} of host ${by} wrote for run ${e.runId} (${e.via}), whose workspace is host ${bound}'s, at t=${e.t}`, e.runId as string);
    } else if (e.ev === "worker.claim") {
      counts.claimsTraced += 1;
      const by = hostAt(e.pid, t);
      const bound = runHost(e.runId);
      const list = claimsOf.get(String(e.runId)) ?? [];
      list.push({ t, host: by });
      claimsOf.set(String(e.runId), list);
      if (bound !== null && by !== bound) add("wrong_host_claim", `run ${e.runId} (host ${bound}'s workspace) claimed by pid ${e.pid} of host ${by ?? "unknown"} at t=${e.t}`, e.runId as string);
      else if (misplaced(e.runId) !== null && by !== misplaced(e.runId)) add("wrong_host_claim", `run ${e.runId} (its workspace lies under host ${misplaced(e.runId)}'s root, bound to ${bound ?? "(none)"}) claimed by pid ${e.pid} of host ${by ?? "unknown"} at t=${e.t}`, e.runId as string);
      // Its own host cannot claim while dead; anyone else claiming it is the wrong host too.
      if (deadAt(bound, t)) add("dead_host_run_lost", `run ${e.runId} of host ${bound} was claimed by pid ${e.pid} at t=${e.t}, while host ${bound} was down: it was to wait for its host`, e.runId as string);
    } else if (e.ev === "sweep.handle") {
      counts.sweepUnitsTraced += 1;
      const by = hostAt(e.pid, t);
      const sweep = String(e.sweep);
      const bound = typeof e.leaseId === "string" ? (leaseHost.get(e.leaseId) ?? null) : runHost(e.runId);
      if (by === null || bound === null || by === bound) continue;
      const kind: ViolationKind = FINALIZING.has(sweep) ? "wrong_host_finalize" : CLEANING.has(sweep) ? "wrong_host_cleanup" : "wrong_host_sweep";
      add(kind, `the ${sweep} sweep of pid ${e.pid} (host ${by}) handled ${typeof e.leaseId === "string" ? `lease ${e.leaseId}` : `run ${e.runId}`}, bound to host ${bound}, at t=${e.t}`, (e.runId as string) ?? undefined);
    }
  }

  // The database's own record of each claim names the claiming host too.
  for (const c of hosts.claims) {
    const bound = runHost(c.runId);
    if (bound !== null && c.hostId !== bound) add("wrong_host_claim", `run ${c.runId} (host ${bound}'s workspace) was recorded claimed by host ${c.hostId ?? "(none)"}`, c.runId);
    else if (misplaced(c.runId) !== null && c.hostId !== misplaced(c.runId)) add("wrong_host_claim", `run ${c.runId} (its workspace lies under host ${misplaced(c.runId)}'s root, bound to ${bound ?? "(none)"}) was recorded claimed by host ${c.hostId ?? "(none)"}`, c.runId);
  }

  // Files: each host file a run wrote (its token) is of a run of that host's task, claimed only by that host.
  for (const h of hosts.hosts) {
    for (const ws of h.workspaces) {
      for (const [rel, entry] of Object.entries(final.host[ws] ?? {})) {
        if (entry.kind !== "file" || entry.token === null) continue;
        const bound = runHost(entry.token);
        const claimers = [...new Set((claimsOf.get(entry.token) ?? []).map((c) => c.host))].filter((x) => x !== h.id);
        if ((bound !== null && bound !== h.id) || claimers.length > 0) {
          add("cross_host_write", `${ws}/${rel} (host ${h.id}) holds run ${entry.token}'s file; that run's task is host ${bound ?? "(unbound)"}'s${claimers.length > 0 ? `, claimed by host ${claimers.join(", ")}` : ""}`, entry.token);
        }
      }
    }
  }
  // Sandboxes: a local lease's directory lies only under its own host's instance root.
  for (const l of hosts.leases) for (const on of l.sandboxOn) if (l.hostId !== null && on !== l.hostId) add("cross_host_write", `lease ${l.leaseId} (host ${l.hostId}) has a sandbox directory under host ${on}'s instance root`);

  // A dead host's runs wait and resume: none is left queued or running at the end, and the count of
  // those that were queued at its return and then claimed by it says the case was met.
  const killed = new Set(windows.keys());
  // A run held by an open recovery action, or a fake run whose sandbox died with its killed worker
  // (its export retries: relaxed elsewhere), rightly stays running: the quiet period counts it as
  // held (wait-settled.ts) and the hold rules judge it. Only an unheld run left queued or running
  // was lost (seed 3, two hosts: a fake run of host b, killed by kill_worker after b's return, held
  // by an unverified-owner action, was reported here).
  const held = new Set<string>([
    ...final.actions.filter((a) => a.runId !== null && (a.status === "active" || a.status === "escalated")).map((a) => a.runId!),
    ...final.coordinators.filter((c) => c.phase === "retryable_failure" && c.failureCode === "provider_sandbox_missing").map((c) => c.runId),
  ]);
  for (const run of final.runs) {
    const bound = runHost(run.id);
    if (bound !== null && killed.has(bound) && !held.has(run.id) && (run.status === "queued" || run.status === "running")) add("dead_host_run_lost", `run ${run.id} of host ${bound} (killed ${windows.get(bound)!.length} time(s)) ended ${run.status}: it never resumed after its host returned`, run.id);
  }
  const woken = new Map<string, bigint>();
  for (const op of operations) if (op.f === "client.wake" && happened(op) && typeof op.value.runId === "string" && op.completedAt !== null) woken.set(op.value.runId, op.completedAt);
  for (const [runId, at] of woken) {
    const bound = runHost(runId);
    const first = (claimsOf.get(runId) ?? [])[0];
    if (bound === null || !first) continue;
    if ((windows.get(bound) ?? []).some((w) => w.to !== null && at < w.to && first.t >= w.to && first.host === bound)) counts.waitedForDeadHost += 1;
  }
  for (const list of windows.values()) {
    counts.hostKills += list.length;
    counts.hostReturns += list.filter((w) => w.to !== null).length;
  }
  return { violations, counts };
}
