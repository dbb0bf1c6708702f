// The checker: reads the history and the final state and judges them. Pure:
// the same inputs give the same verdict, so hand-made histories test it (check.test.ts).
//
// R-FO-1 (runs that fail before their result keep their files) is checked strictly: a native run that failed without an accepted result while it had
// an allocated sandbox (a `process_lost` orphan, an agent that exited without a result, a provider
// failure) must have a file-recovery obligation naming it, and its lease must be pinned: never
// left `active`, never destroyed, released only as stopped-and-retained, a local sandbox still on
// disk (`died_before_result_unrecovered`).
// Relaxed for the fake provider, always: its sandboxes live in the memory of the worker that
// acquired them, so a fake run whose worker died can lose its sandbox (`provider_sandbox_missing`);
// counted as `fake_sandbox_lost`; such a coordinator is retried (`retryable_failure`) until the
// export retry budget is spent, so the held or retrying fake run is not "unsettled" either.
// Relaxed while a result hold is open: the files a held accepted result published under the lock
// before its worker died (`held_run_partial_write`); the retry or the attested copyback commits them.
// The history's operations are read through operations.ts: an operation whose outcome is unknown
// (info) excuses only what it may have done, and a history that breaks the invoke/completion
// pairing is itself a violation (`history_unpaired`), since nothing read from it can be trusted.
import type { HistoryEvent } from "../history";
import { operationCounts } from "./counts";
import type { FinalState } from "./final-state";
import { checkFiles } from "./files";
import { daytonaViolations } from "./daytona-rules";
import { harnessTakeoverViolations } from "./harness-takeovers";
import { hostViolations } from "./hosts";
import { mergeIntervals, overlaps } from "./intervals";
import { faultsOf, mayHaveHappened, readOperations } from "./operations";
import { bump, FILE_RECOVERY, OPEN, RESULT_HOLD_CAUSES, UNSETTLED_PHASES, type Verdict, type Violation, type ViolationKind } from "./verdict";

export function check(history: readonly HistoryEvent[], final: FinalState): Verdict {
  const violations: Violation[] = [];
  const relaxed: Record<string, number> = {};
  const add = (kind: ViolationKind, detail: string, runId?: string) => violations.push({ kind, detail, ...(runId ? { runId } : {}) });

  const { operations, unpaired } = readOperations(history);
  for (const problem of unpaired) add("history_unpaired", problem);

  // 1. Writers and owners, observed from outside the product's bookkeeping.
  const intervals = mergeIntervals(history, faultsOf(operations).kills);
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
      // to recover files, not to apply a saved result: a Stop racing the finish leaves one).
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
  const { committedRuns } = checkFiles(final, {
    accepted,
    coordinators,
    wroteUnderLock: new Set(intervals.map((i) => i.runId).filter((id): id is string => id !== null)),
    resultHeld: (id) => openHolds(id).some((h) => RESULT_HOLD_CAUSES.has(h.cause)),
    fakeSandboxLost,
    add,
    relaxed,
  });

  // The harness's operator discards a retained sandbox only after it observed it kept (pinned,
  // on disk, listed: the operator.discard operation's invoke, verified); such a lease was kept until
  // then. Its Discard excuses the lease's destruction only if it may have taken effect (ok, or info:
  // the answer lost after its admission); a refused one (fail) destroyed nothing.
  const discardOps = operations.filter((op) => op.f === "operator.discard" && op.value.verified === true);
  const verifiedDiscards = new Set(discardOps.filter(mayHaveHappened).map((op) => String(op.value.leaseId)));
  const operatorDiscards = new Set(discardOps.filter((op) => op.outcome === "ok").map((op) => String(op.value.leaseId))).size;
  // A Discard whose request did not finish it (its last transaction failed after the
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
    // What the run tells people must be true: a failed run that says its sandbox is kept has a
    // sandbox of its own (an allocation) or a recovery action naming it.
    if (run.status === "failed" && /\b(kept|retained)\b/i.test(run.errorMessage ?? "")) {
      const kept = final.leases.some((l) => l.runId === run.id && l.providerLeaseId !== null) || final.actions.some((a) => a.runId === run.id);
      if (!kept) add("retention_claimed_falsely", `run ${run.id} failed (${run.errorCode ?? "no code"}) saying its sandbox is kept, but it had no sandbox and no recovery action: "${run.errorMessage}"`, run.id);
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
  // another run (the held-lease rule of acquisition). A reuse at `at` of a lease whose
  // previous run had an accepted result not committed by then, or had ended failed, cancelled or
  // timed out without a commit (nobody here resolves those holds), reseeded files still needed.
  const lastHolder = new Map<string, string>();
  let reuses = 0;
  for (const acquisition of final.acquisitions ?? []) {
    const previous = lastHolder.get(acquisition.leaseId);
    // An attempt that ran no agent (requeued, or its setup failed) left none of its run's files:
    // the lease still holds what its holder before it left there.
    if (acquisition.noAgentRan !== true) lastHolder.set(acquisition.leaseId, acquisition.runId);
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

  // The chances to break that rule: a run whose export failed transiently released its
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
    if ((lease.provider !== "local" && lease.provider !== "daytona") || lease.sandboxExists !== true || lease.status === "destroyed" || lease.retainedListed !== false) continue;
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
  for (const name of final.strayDaytonaSandboxes ?? []) add("retained_invisible", `Daytona sandbox ${name} is not destroyed but no live lease names it`);

  // Counts.
  const runsByStatus: Record<string, number> = {};
  for (const run of final.runs) bump(runsByStatus, run.status === "failed" && run.errorCode ? `failed:${run.errorCode}` : run.status);
  const holdsByCause: Record<string, number> = {};
  const openHoldsByCause: Record<string, number> = {};
  for (const action of final.actions) {
    bump(holdsByCause, action.cause);
    if (OPEN.has(action.status)) bump(openHoldsByCause, action.cause);
  }
  // `--attester harness` only (its history lines): harness-takeovers.ts.
  violations.push(...harnessTakeoverViolations(history, final));
  // `--provider daytona` only (the emulator's observations): daytona-rules.ts.
  violations.push(...daytonaViolations(history, final, { discarded: new Set(final.leases.filter(discarded).map((l) => l.id)) }));
  // `--hosts 2` only (hosts.ts): every host-local thing touched by its own host, a dead host's runs waiting for it.
  const hostRules = hostViolations(history, operations, final);
  violations.push(...hostRules.violations);
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
      ...operationCounts(operations),
      mergeIntervals: intervals.length,
      operatorDiscards,
      reuses,
      unsettledReleases,
      acquisitionsBesideUnsettled,
      heldLeaseTaken: violations.filter((v) => v.kind === "held_lease_taken").length,
      relaxed,
      ...(final.hosts ? { hosts: hostRules.counts } : {}),
      violationsByKind,
    },
  };
}
