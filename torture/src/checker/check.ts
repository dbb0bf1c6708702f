// The checker (issue 12 item 5): reads the history and the final state and judges them. Pure:
// the same inputs give the same verdict, so hand-made histories test it (check.test.ts).
//
// Issue 11 (runs that fail before their result keep their files, R-FO-1) is built, so what was
// relaxed until it is strict now: a native run that failed without an accepted result while it had
// an allocated sandbox (a `process_lost` orphan, an agent that exited without a result, a provider
// failure) must have a file-recovery obligation naming it, and its lease must be pinned: never
// left `active`, never destroyed, released only as stopped-and-retained, a local sandbox still on
// disk (`died_before_result_unrecovered`). `--strict-issue-11` is accepted and changes nothing.
// Relaxed for the fake provider, always: its sandboxes live in the memory of the worker that
// acquired them, so a fake run whose worker died can lose its sandbox (`provider_sandbox_missing`);
// counted as `fake_sandbox_lost`. Until issue 10 (the export retry budget) such a coordinator is
// retried forever (`retryable_failure`), so the held or retrying fake run is not "unsettled" either.
// Relaxed while a result hold is open: the files a held accepted result published under the lock
// before its worker died (`held_run_partial_write`); the retry or the attested copyback commits them.
import type { HistoryEvent } from "../history";
import type { FinalState, HostEntry } from "./final-state";
import { applyFakeRun, applyLocalRun, pathsRunMayWrite, type DirModel } from "./model";

export const OWNER_UNVERIFIED = "native_workspace_finalization_owner_unverified";
/** R-FO-1: the obligation a run that failed before its result opens (records/causes.ts). */
export const FILE_RECOVERY = "native_workspace_file_recovery_required";
/**
 * The causes that hold an accepted result (records/causes.ts): an unverified owner, an exhausted
 * export retry budget (issue 10), an export over a limit, and (issue 20) a copyback that failed for
 * good (a merge conflict, a changed binding, a terminal failure): each keeps the result and its
 * sandbox for an operator. Any other cause (a file-recovery obligation) does not apply the result.
 */
export const RESULT_HOLD_CAUSES = new Set([OWNER_UNVERIFIED, "native_workspace_sync_out_retry_exhausted", "native_workspace_sync_out_limit_exceeded", "native_workspace_sync_out_failed"]);
const OPEN = new Set(["active", "escalated"]);
const UNSETTLED_PHASES = new Set(["observed", "result_accepted", "workspace_finalizing", "arbitrating", "retryable_failure"]);

export const VIOLATION_KINDS = [
  "concurrent_writers",
  "concurrent_owners",
  "double_copy",
  "commit_without_barrier",
  "accepted_result_dropped",
  "accepted_not_settled",
  "duplicate_holds",
  "hold_wrong_cause",
  "lost_file",
  "torn_file",
  "uncommitted_write",
  "committed_overwritten",
  "unexpected_file",
  "baseline_changed",
  "unsafe_link_on_host",
  "held_sandbox_destroyed",
  "held_sandbox_reused",
  "run_left_running",
  "run_left_queued",
  "lease_active_without_run",
  "coordinator_unsettled",
  "died_before_result_unrecovered",
  "provenance",
  "held_lease_taken",
  "retained_invisible",
  "discard_unfinished",
] as const;
export type ViolationKind = (typeof VIOLATION_KINDS)[number];

export interface Violation {
  kind: ViolationKind;
  detail: string;
  runId?: string;
}

export interface CheckOptions {
  /** Accepted for older command lines; nothing is relaxed for issue 11 any more. */
  strictIssue11?: boolean;
}

export interface Verdict {
  violations: Violation[];
  counts: {
    runs: number;
    runsByStatus: Record<string, number>;
    commits: number;
    acceptedResults: number;
    holdsByCause: Record<string, number>;
    openHoldsByCause: Record<string, number>;
    attestations: number;
    faultsByKind: Record<string, number>;
    faults: number;
    mergeIntervals: number;
    /** Stop requests the clients sent, by answer (issue 20: Stop racing the agent's finish). */
    stopsByOutcome: Record<string, number>;
    /** Retained sandboxes the harness's operator verified and discarded (operator.ts). */
    operatorDiscards: number;
    /** Lease acquisitions that reused a released lease. */
    reuses: number;
    /** Leases released by policy ("failed") after a transient export failure while their run's accepted result waited for its retry. */
    unsettledReleases: number;
    /** Other runs' acquisitions on the same environment and workspace while such a lease waited (each could have been handed it). */
    acquisitionsBesideUnsettled: number;
    /** Of all acquisitions, those handed a held lease (the violations held_lease_taken). */
    heldLeaseTaken: number;
    relaxed: Record<string, number>;
    violationsByKind: Record<string, number>;
  };
}

interface Interval {
  pid: number;
  target: string;
  runId: string | null;
  start: bigint;
  end: bigint | null;
}

const bump = (map: Record<string, number>, key: string, n = 1) => {
  map[key] = (map[key] ?? 0) + n;
};

/** Locked host-write intervals from the workers' merge trace; a worker's death closes its open ones. */
export function mergeIntervals(history: readonly HistoryEvent[]): Interval[] {
  const open = new Map<string, Interval[]>();
  const done: Interval[] = [];
  for (const e of history) {
    if (e.ev === "merge.enter") {
      const key = `${e.pid}\0${e.target}`;
      const list = open.get(key) ?? [];
      list.push({ pid: Number(e.pid), target: String(e.target), runId: (e.runId as string | null) ?? null, start: BigInt(e.t), end: null });
      open.set(key, list);
    } else if (e.ev === "merge.exit") {
      const list = open.get(`${e.pid}\0${e.target}`);
      const interval = list?.shift();
      if (interval) done.push({ ...interval, end: BigInt(e.t) });
    } else if (e.ev === "worker.exit" || (e.ev === "fault" && e.kind === "kill_worker" && e.pid !== undefined)) {
      // A SIGKILLed worker's open sections end when the signal is sent: the kernel releases its
      // SQLite lock as it dies, moments after, while the harness may observe the exit much later
      // on a loaded machine (its event loop is busy). Closing at the observation would report a
      // writer that took the freed lock in between as concurrent.
      for (const [key, list] of open) {
        if (!key.startsWith(`${e.pid}\0`)) continue;
        for (const interval of list) done.push({ ...interval, end: BigInt(e.t) });
        open.delete(key);
      }
    }
  }
  for (const list of open.values()) done.push(...list);
  return done.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
}

function overlaps(intervals: Interval[], keyOf: (i: Interval) => string | null, kind: ViolationKind, out: Violation[]): void {
  const groups = new Map<string, Interval[]>();
  for (const interval of intervals) {
    const key = keyOf(interval);
    if (key === null) continue;
    const list = groups.get(key) ?? [];
    list.push(interval);
    groups.set(key, list);
  }
  for (const [key, list] of groups) {
    // Sorted by start: an interval overlaps an earlier one that has not ended when it starts.
    const active: Interval[] = [];
    for (const interval of list) {
      for (let i = active.length - 1; i >= 0; i--) {
        const other = active[i]!;
        if (other.end !== null && other.end <= interval.start) active.splice(i, 1);
      }
      for (const other of active) {
        out.push({
          kind,
          runId: interval.runId ?? undefined,
          detail: `${key}: pid ${other.pid} (run ${other.runId}) from t=${other.start} to ${other.end ?? "never"} and pid ${interval.pid} (run ${interval.runId}) from t=${interval.start}`,
        });
      }
      active.push(interval);
    }
  }
}

export function check(history: readonly HistoryEvent[], final: FinalState, _options: CheckOptions = {}): Verdict {
  const violations: Violation[] = [];
  const relaxed: Record<string, number> = {};
  const add = (kind: ViolationKind, detail: string, runId?: string) => violations.push({ kind, detail, ...(runId ? { runId } : {}) });

  // 1. Writers and owners, observed from outside the product's bookkeeping.
  const intervals = mergeIntervals(history);
  overlaps(intervals, (i) => i.target, "concurrent_writers", violations);
  // Two different processes with lock sections for one run at once (different targets included).
  const byRun = intervals.filter((i) => i.runId !== null);
  overlaps(byRun, (i) => i.runId, "concurrent_owners", violations);

  const runs = new Map(final.runs.map((r) => [r.id, r]));
  const coordinators = new Map(final.coordinators.map((c) => [c.runId, c]));
  const accepted = new Set(final.acceptedResults.map((r) => r.runId));
  const openHolds = (runId: string) => final.actions.filter((a) => a.runId === runId && OPEN.has(a.status));
  const succeededOps = (runId: string) => final.finalizeOps.filter((o) => o.runId === runId && o.status === "succeeded");
  const fakeSandboxLost = (runId: string) => {
    const run = runs.get(runId);
    return run?.provider === "fake" && (run.errorCode === "provider_sandbox_missing" || coordinators.get(runId)?.failureCode === "provider_sandbox_missing");
  };

  // 2. Every accepted result: committed exactly once, or held by exactly one open action of the right cause.
  for (const runId of accepted) {
    const run = runs.get(runId);
    const coordinator = coordinators.get(runId);
    const holds = openHolds(runId);
    const committed = run?.status === "succeeded" && coordinator?.phase === "committed";
    if (committed) {
      const ops = succeededOps(runId).length;
      if (ops > 1) add("double_copy", `run ${runId} has ${ops} succeeded workspace_finalize operations`, runId);
      if (ops === 0) add("commit_without_barrier", `run ${runId} committed without a succeeded workspace_finalize operation`, runId);
      if (holds.length > 0) add("accepted_not_settled", `run ${runId} committed but ${holds.length} hold(s) are still open`, runId);
      continue;
    }
    if (holds.some((h) => RESULT_HOLD_CAUSES.has(h.cause))) {
      if (holds.length > 1) add("duplicate_holds", `run ${runId} has ${holds.length} open recovery actions`, runId);
      for (const hold of holds) if (!RESULT_HOLD_CAUSES.has(hold.cause)) add("hold_wrong_cause", `run ${runId} is held with cause ${hold.cause}`, runId);
      continue;
    }
    if (holds.length > 0) {
      // Held, but by nothing that applies the result (a file-recovery obligation asks an operator
      // to recover files, not to apply a saved result: issue 20, Stop racing the finish).
      add("accepted_result_dropped", `run ${runId} has an accepted result, ended ${run?.status ?? "missing"} (${run?.errorCode ?? "no code"}), coordinator ${coordinator?.phase ?? "none"}, held only by ${holds.map((h) => h.cause).join(", ")}, which does not apply it`, runId);
      continue;
    }
    if (fakeSandboxLost(runId)) {
      bump(relaxed, "fake_sandbox_lost");
      continue;
    }
    if (run && (run.status === "queued" || run.status === "running" || (coordinator && UNSETTLED_PHASES.has(coordinator.phase)))) {
      add("accepted_not_settled", `run ${runId} has an accepted result, status ${run.status}, coordinator ${coordinator?.phase ?? "none"}, no hold`, runId);
      continue;
    }
    add("accepted_result_dropped", `run ${runId} has an accepted result but ended ${run?.status ?? "missing"} (${run?.errorCode ?? "no code"}), coordinator ${coordinator?.phase ?? "none"}, without a hold`, runId);
  }

  // 3. Files: every run directory equals the replay of its committed runs in commit order.
  const committedRuns = final.runs
    .filter((r) => r.status === "succeeded" && coordinators.get(r.id)?.phase === "committed")
    .map((r) => ({ run: r, at: coordinators.get(r.id)?.committedAt ?? "" }))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const committedIds = new Set(committedRuns.map((c) => c.run.id));
  // A held accepted result whose locked host write was observed may have published part of its
  // files before its worker died (the merge is idempotent: the export-only retry or the attested
  // copyback commits them exactly). Those bytes are in flight, not an uncommitted writer: counted
  // as `held_run_partial_write` while the hold is open. Without an observed locked write, or once
  // the hold is gone, they stay `uncommitted_write`.
  // The same holds for a fake run whose sandbox died with its worker after such a write (the
  // attested copyback then finds no sandbox and retries, `fake_sandbox_lost` above): a real
  // provider's sandbox outlives its controller and the retry would commit those bytes.
  const wroteUnderLock = new Set(intervals.map((i) => i.runId).filter((id): id is string => id !== null));
  const resultHeld = (id: string) => openHolds(id).some((h) => RESULT_HOLD_CAUSES.has(h.cause));
  const inFlight = new Set([...accepted].filter((id) => !committedIds.has(id) && wroteUnderLock.has(id) && (resultHeld(id) || fakeSandboxLost(id))));
  const heldInFlight = (kind: ViolationKind, got: HostEntry) => kind === "uncommitted_write" && got.kind === "file" && got.token !== null && inFlight.has(got.token);
  const knownHashes = new Set<string>();
  const slotsByIssue = new Map(final.slots.map((s) => [s.issueId, s]));
  const models = new Map<string, DirModel>();
  for (const { run } of committedRuns) {
    const slot = slotsByIssue.get(run.issueId);
    if (!slot) continue;
    const model = models.get(slot.slot) ?? new Map();
    models.set(slot.slot, model);
    const barrier = final.finalizeOps.find((o) => o.runId === run.id && o.status === "succeeded");
    if (barrier?.omitted) continue;
    const before: DirModel = new Map(model);
    if (slot.kind === "local") applyLocalRun(model, slot.dir, run.id);
    else applyFakeRun(model, slot.dir, run.id);
    for (const entry of model.values()) if (entry.kind === "file") knownHashes.add(entry.sha256);
    // Provenance (issue 20): every path this run's copyback wrote is one its own agent wrote, in its
    // own directory. A copyback that exported another run's sandbox (a reused lease) writes that
    // run's files, or the host's newer state of other directories, under this run's name.
    const may = pathsRunMayWrite(before, model, slot.dir);
    const foreign = (barrier?.written ?? []).filter((p) => !may.has(p));
    if (foreign.length > 0) {
      add("provenance", `run ${run.id} (${slot.slot}) committed ${foreign.length} path(s) its own agent did not write: ${foreign.slice(0, 5).join(", ")}${foreign.length > 5 ? ", ..." : ""}`, run.id);
    }
  }
  for (const slot of final.slots) {
    const host = final.host[slot.workspace] ?? {};
    const model = models.get(slot.slot) ?? new Map();
    const prefix = `${slot.dir}/`;
    const actual = new Map<string, HostEntry>();
    for (const [rel, entry] of Object.entries(host)) if (rel.startsWith(prefix) && entry.kind !== "directory") actual.set(rel.slice(prefix.length), entry);
    for (const [name, expected] of model) {
      const got = actual.get(name);
      const where = `${slot.workspace}/${slot.dir}/${name}`;
      if (!got) {
        add("lost_file", `${where}: expected ${expected.kind === "file" ? `the bytes of run ${expected.token}` : `a link to ${expected.target}`}, missing`, expected.kind === "file" ? expected.token : undefined);
        continue;
      }
      if (expected.kind === "symlink") {
        if (got.kind !== "symlink" || got.target !== expected.target) add("committed_overwritten", `${where}: expected a link to ${expected.target}, found ${describe(got)}`);
        continue;
      }
      if (got.kind === "file" && got.sha256 === expected.sha256) continue;
      const kind = classify(got, committedIds, knownHashes);
      if (heldInFlight(kind, got)) bump(relaxed, "held_run_partial_write");
      else add(kind, `${where}: expected the bytes of run ${expected.token}, found ${describe(got)}`, expected.token);
    }
    for (const [name, got] of actual) {
      if (model.has(name)) continue;
      const where = `${slot.workspace}/${slot.dir}/${name}`;
      if (got.kind === "symlink" && got.target.startsWith("/")) add("unsafe_link_on_host", `${where} -> ${got.target}`);
      else {
        const kind = got.kind === "file" ? classifyExtra(got, committedIds) : "unexpected_file";
        if (heldInFlight(kind, got)) bump(relaxed, "held_run_partial_write");
        else add(kind, `${where}: not expected, found ${describe(got)}`);
      }
    }
  }
  // Outside the run directories the host stays as it began.
  for (const [workspace, files] of Object.entries(final.baseline)) {
    const host = final.host[workspace] ?? {};
    const inRunDir = (rel: string) => rel === "t" || rel.startsWith("t/");
    for (const [rel, entry] of Object.entries(files)) {
      if (inRunDir(rel) || entry.kind === "directory") continue;
      const got = host[rel];
      if (!got || describe(got) !== describe(entry)) add("baseline_changed", `${workspace}/${rel}: was ${describe(entry)}, now ${got ? describe(got) : "missing"}`);
    }
    for (const [rel, entry] of Object.entries(host)) {
      if (inRunDir(rel) || entry.kind === "directory" || files[rel]) continue;
      add("unexpected_file", `${workspace}/${rel}: outside any run directory, found ${describe(entry)}`);
    }
  }

  // The harness's operator discards a retained sandbox only after it observed it kept (pinned,
  // on disk, listed: operator.discard in the history, verified); such a lease was kept until then.
  const verifiedDiscards = new Set(history.filter((e) => e.ev === "operator.discard" && e.verified === true).map((e) => String(e.leaseId)));
  // Issue 20: a Discard whose request did not finish it (its last transaction failed after the
  // destroy when PostgreSQL restarted, or its process died) is resumable: the lease cleanup sweep
  // finishes it once the request's short claim lapsed (resume-discard.ts). So after the quiet period
  // every admitted Discard of the harness's operator is recorded: the lease destroyed with its
  // receipt. A lease still carrying the operator's discard intent, not destroyed, is a violation
  // (`discard_unfinished`), reported once, and not again as a lost held sandbox: the operator gave
  // those files up (verified), what failed is that the product never recorded it.
  const unfinishedDiscards = new Set<string>();
  for (const lease of final.leases) {
    if (lease.discardUnrecorded !== true) continue;
    unfinishedDiscards.add(lease.id);
    add(
      "discard_unfinished",
      `lease ${lease.id} of run ${lease.runId}: the operator's Discard was admitted${verifiedDiscards.has(lease.id) ? " (verified)" : " (never verified)"} but the lease is ${lease.status}, not recorded destroyed${lease.sandboxExists === false ? " (sandbox gone)" : lease.sandboxExists === true ? " (sandbox still on disk)" : ""}`,
      lease.runId ?? undefined,
    );
  }
  const discarded = (lease: FinalState["leases"][number]) => verifiedDiscards.has(lease.id) && (lease.discardedByOperator === true || unfinishedDiscards.has(lease.id));

  // 4. Held sandboxes are kept: their lease not destroyed, released only as stopped-and-retained
  // (a confirmed stop receipt: R-SO-2), the sandbox there, no other run on it.
  for (const action of final.actions) {
    if (!OPEN.has(action.status) || !action.runId) continue;
    for (const lease of final.leases.filter((l) => l.runId === action.runId)) {
      // An attempt that went back to the queue before its agent started held nothing of the task's.
      if (discarded(lease) || lease.agentNeverStarted === true) continue;
      if (lease.status === "destroyed" || (lease.status === "released" && lease.stoppedAndRetained !== true) || lease.sandboxExists === false) {
        add("held_sandbox_destroyed", `run ${action.runId} is held (${action.id}) but its lease ${lease.id} is ${lease.status}${lease.sandboxExists === false ? ", sandbox gone" : ""}`, action.runId);
      }
      const others = final.leases.filter((l) => l.id !== lease.id && l.providerLeaseId !== null && l.providerLeaseId === lease.providerLeaseId);
      if (others.length > 0) add("held_sandbox_reused", `run ${action.runId}'s sandbox ${lease.providerLeaseId} is also on lease(s) ${others.map((o) => o.id).join(", ")}`, action.runId);
    }
  }

  // 5. Everything settles: no run left running or queued, no active lease without a live run, no coordinator in flight.
  for (const run of final.runs) {
    const held = openHolds(run.id).length > 0;
    const fakeLost = run.provider === "fake" && coordinators.get(run.id)?.failureCode === "provider_sandbox_missing";
    if (run.status === "running" && !held && !fakeLost) add("run_left_running", `run ${run.id} is still running without a hold`, run.id);
    if (run.status === "queued") add("run_left_queued", `run ${run.id} is still queued`, run.id);
    const coordinator = coordinators.get(run.id);
    if (coordinator && UNSETTLED_PHASES.has(coordinator.phase) && !held && !accepted.has(run.id)) {
      add("coordinator_unsettled", `run ${run.id}: coordinator ${coordinator.phase}`, run.id);
    }
    // R-FO-1: a run that failed before its result keeps its files: one obligation, its lease pinned.
    // Only a sandbox the run was handed can hold its agent's files: an acquisition that failed, or
    // whose controller died before it recorded the allocation (the sweep names and destroys it
    // then), gave none; nor did an attempt that went back to the queue before its agent started.
    const allocated = final.leases.filter((l) => l.runId === run.id && l.providerLeaseId !== null && l.handedToRun !== false && l.agentNeverStarted !== true);
    if (run.status === "failed" && !accepted.has(run.id) && coordinator?.phase !== "committed" && allocated.length > 0) {
      const obligations = final.actions.filter((a) => a.runId === run.id && a.cause === FILE_RECOVERY);
      if (obligations.length === 0) add("died_before_result_unrecovered", `run ${run.id} failed before its result (${run.errorCode ?? "no code"}); no file-recovery obligation keeps its sandbox's files`, run.id);
      if (obligations.length > 1) add("duplicate_holds", `run ${run.id} has ${obligations.length} file-recovery obligations`, run.id);
      for (const lease of allocated) {
        if (discarded(lease)) continue;
        const unpinned =
          lease.status === "active" || lease.status === "destroyed" || (lease.status === "released" && lease.stoppedAndRetained !== true) || lease.sandboxExists === false;
        if (unpinned) add("died_before_result_unrecovered", `run ${run.id} failed before its result but its lease ${lease.id} is ${lease.status}${lease.sandboxExists === false ? ", sandbox gone" : ""}`, run.id);
      }
    }
  }
  for (const lease of final.leases) {
    if (lease.status !== "active") continue;
    const run = lease.runId ? runs.get(lease.runId) : undefined;
    if (run && (run.status === "queued" || run.status === "running")) continue;
    if (run && openHolds(run.id).length > 0) continue;
    add("lease_active_without_run", `lease ${lease.id} is active; its run ${lease.runId} is ${run?.status ?? "missing"} (${run?.errorCode ?? "no code"})`, lease.runId ?? undefined);
  }

  // 6. No lease bound to an unsettled finalization, or holding a failed run's files, is ever handed to
  // another run (issue 20: the held-lease rule of acquisition). A reuse at `at` of a lease whose
  // previous run had an accepted result not committed by then, or had ended failed, cancelled or
  // timed out without a commit (nobody here resolves those holds), reseeded files still needed.
  const lastHolder = new Map<string, string>();
  let reuses = 0;
  for (const acquisition of final.acquisitions ?? []) {
    const previous = lastHolder.get(acquisition.leaseId);
    lastHolder.set(acquisition.leaseId, acquisition.runId);
    if (!acquisition.reused) continue;
    reuses += 1;
    if (!previous || previous === acquisition.runId) continue;
    const prior = runs.get(previous);
    const priorCoordinator = coordinators.get(previous);
    const committedBefore = priorCoordinator?.phase === "committed" && priorCoordinator.committedAt !== null && priorCoordinator.committedAt <= acquisition.at;
    if (committedBefore) continue;
    if (accepted.has(previous)) {
      add("held_lease_taken", `lease ${acquisition.leaseId} was handed to run ${acquisition.runId} at ${acquisition.at} while run ${previous}'s accepted result was not committed (coordinator ${priorCoordinator?.phase ?? "none"}${priorCoordinator?.committedAt ? `, committed ${priorCoordinator.committedAt}` : ""})`, previous);
    } else if (prior && ["failed", "cancelled", "timed_out"].includes(prior.status) && priorCoordinator?.phase !== "committed") {
      add("held_lease_taken", `lease ${acquisition.leaseId} was handed to run ${acquisition.runId} at ${acquisition.at}, but it held run ${previous}'s files (${prior.status}, ${prior.errorCode ?? "no code"})`, previous);
    }
  }

  // The chances to break that rule (issue 20): a run whose export failed transiently released its
  // lease by policy as "failed" while its accepted result waited for the retry; every other run's
  // acquisition on the same environment and execution workspace before that result committed (or,
  // never committed, until the end) could have been handed that lease. Counted, with how many were.
  let acquisitionsBesideUnsettled = 0;
  let unsettledReleases = 0;
  const leaseById = new Map(final.leases.map((l) => [l.id, l]));
  for (const release of final.releases ?? []) {
    if (release.outcome !== "failed" || !accepted.has(release.runId)) continue;
    const mine = leaseById.get(release.leaseId);
    if (!mine?.environmentId) continue;
    const committedAt = coordinators.get(release.runId)?.committedAt ?? null;
    if (committedAt !== null && committedAt <= release.at) continue;
    unsettledReleases += 1;
    for (const acquisition of final.acquisitions ?? []) {
      if (acquisition.runId === release.runId || acquisition.at < release.at || (committedAt !== null && acquisition.at >= committedAt)) continue;
      const theirs = leaseById.get(acquisition.leaseId);
      if (theirs?.environmentId === mine.environmentId && theirs.executionWorkspaceId === mine.executionWorkspaceId) acquisitionsBesideUnsettled += 1;
    }
  }

  // 7. Nothing that holds files is invisible to the Retained sandboxes list: a local sandbox on disk
  // is in use by a live run, listed as retained, or a warm reusable one (released with a confirmed
  // stop, its run settled); never one whose lease is destroyed or missing.
  for (const lease of final.leases) {
    if (lease.provider !== "local" || lease.sandboxExists !== true || lease.status === "destroyed" || lease.retainedListed !== false) continue;
    const run = lease.runId ? runs.get(lease.runId) : undefined;
    if (lease.status === "active" && run && (run.status === "queued" || run.status === "running")) continue;
    const committed = run?.status === "succeeded" || coordinators.get(run?.id ?? "")?.phase === "committed";
    const warm = lease.leasePolicy === "reuse_by_environment" && lease.status === "released" && lease.stoppedAndRetained === true && committed;
    if (warm) continue;
    // A destroy the cleanup sweep finishes (its release was interrupted: the intent is recorded, the
    // claim of the dead releaser lapses first) of a sandbox that holds nothing: its run committed,
    // or no agent ever ran on it. Anything else with a destroy intent is judged below.
    if (lease.status === "pending_cleanup" && lease.destroyPending === true && (committed || lease.agentNeverStarted === true)) continue;
    add("retained_invisible", `lease ${lease.id} (${lease.leasePolicy ?? "?"}, ${lease.status}) of run ${lease.runId} (${run?.status ?? "missing"}) has its sandbox on disk but is not in the retained list`, lease.runId ?? undefined);
  }
  for (const name of final.strayLocalSandboxes ?? []) add("retained_invisible", `sandbox ${name} is on disk but no live lease names it`);

  // Counts.
  const runsByStatus: Record<string, number> = {};
  for (const run of final.runs) bump(runsByStatus, run.status === "failed" && run.errorCode ? `failed:${run.errorCode}` : run.status);
  const holdsByCause: Record<string, number> = {};
  const openHoldsByCause: Record<string, number> = {};
  for (const action of final.actions) {
    bump(holdsByCause, action.cause);
    if (OPEN.has(action.status)) bump(openHoldsByCause, action.cause);
  }
  const faultsByKind: Record<string, number> = {};
  const stopsByOutcome: Record<string, number> = {};
  let attestations = 0;
  for (const e of history) {
    if (e.ev === "fault") bump(faultsByKind, String(e.kind));
    if (e.ev === "attest" && e.status === "attested") attestations += 1;
    if (e.ev === "client.stop") bump(stopsByOutcome, String(e.outcome));
  }
  const violationsByKind: Record<string, number> = {};
  for (const v of violations) bump(violationsByKind, v.kind);
  return {
    violations,
    counts: {
      runs: final.runs.length,
      runsByStatus,
      commits: committedRuns.length,
      acceptedResults: accepted.size,
      holdsByCause,
      openHoldsByCause,
      attestations,
      faultsByKind,
      faults: Object.values(faultsByKind).reduce((a, b) => a + b, 0),
      mergeIntervals: intervals.length,
      stopsByOutcome,
      operatorDiscards: verifiedDiscards.size,
      reuses,
      unsettledReleases,
      acquisitionsBesideUnsettled,
      heldLeaseTaken: violations.filter((v) => v.kind === "held_lease_taken").length,
      relaxed,
      violationsByKind,
    },
  };
}

function describe(entry: HostEntry): string {
  if (entry.kind === "file") return `file ${entry.sha256.slice(0, 12)}${entry.token ? ` (token ${entry.token})` : " (no token)"}`;
  if (entry.kind === "symlink") return `link -> ${entry.target}`;
  return "directory";
}

function classify(got: HostEntry, committed: Set<string>, known: Set<string>): ViolationKind {
  if (got.kind !== "file") return "committed_overwritten";
  if (got.token && !committed.has(got.token)) return "uncommitted_write";
  if (!known.has(got.sha256)) return "torn_file";
  return "committed_overwritten";
}

function classifyExtra(got: HostEntry, committed: Set<string>): ViolationKind {
  if (got.kind !== "file") return "unexpected_file";
  if (!got.token) return "torn_file";
  if (!committed.has(got.token)) return "uncommitted_write";
  return "unexpected_file";
}

/** The counts table printed at the end of every run. */
export function formatCounts(verdict: Verdict, header: Record<string, string> = {}): string {
  const rows: [string, string][] = [];
  for (const [k, v] of Object.entries(header)) rows.push([k, v]);
  const c = verdict.counts;
  rows.push(["runs", String(c.runs)]);
  for (const [k, v] of Object.entries(c.runsByStatus).sort()) rows.push([`  runs ${k}`, String(v)]);
  rows.push(["accepted results", String(c.acceptedResults)]);
  rows.push(["commits", String(c.commits)]);
  rows.push(["holds (opened, by cause)", Object.keys(c.holdsByCause).length ? "" : "0"]);
  for (const [k, v] of Object.entries(c.holdsByCause).sort()) rows.push([`  ${k}`, `${v} (open at end ${c.openHoldsByCause[k] ?? 0})`]);
  rows.push(["attestations (automatic)", String(c.attestations)]);
  rows.push(["merge intervals observed", String(c.mergeIntervals)]);
  rows.push(["lease reuses", String(c.reuses)]);
  rows.push(["leases released while their finalization was unsettled", String(c.unsettledReleases)]);
  rows.push(["  acquisitions on that environment and workspace meanwhile", String(c.acquisitionsBesideUnsettled)]);
  rows.push(["  of them handed a held lease (held_lease_taken)", String(c.heldLeaseTaken)]);
  rows.push(["stop requests (by answer)", Object.keys(c.stopsByOutcome).length ? "" : "0"]);
  for (const [k, v] of Object.entries(c.stopsByOutcome).sort()) rows.push([`  ${k}`, String(v)]);
  rows.push(["retained sandboxes discarded by the operator", String(c.operatorDiscards)]);
  rows.push(["faults injected", String(c.faults)]);
  for (const [k, v] of Object.entries(c.faultsByKind).sort()) rows.push([`  ${k}`, String(v)]);
  rows.push(["relaxed (not violations)", Object.keys(c.relaxed).length ? "" : "0"]);
  for (const [k, v] of Object.entries(c.relaxed).sort()) rows.push([`  ${k}`, String(v)]);
  rows.push(["violations", String(verdict.violations.length)]);
  for (const kind of VIOLATION_KINDS) rows.push([`  ${kind}`, String(c.violationsByKind[kind] ?? 0)]);
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n");
}
