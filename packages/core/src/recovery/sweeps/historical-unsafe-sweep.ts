// The historical unsafe export sweep (R-UA-5). An older controller terminalized accepted results
// whose export it judged unsafe with `native_workspace_sync_out_unsafe_archive`; today an unsafe
// archive never fails a completed task (R-UA-1, R-UA-3). This sweep recovers those runs the way
// the current policy would have finished them: it omits the already-rejected export WITHOUT
// contacting the provider (a stopped, unavailable or deleted sandbox cannot require a repair)
// and re-admits the accepted result, then the ordinary finalizeRun arbitrates and commits it.
//
// Under finalization ownership (the same advisory lock and receipt as finalizeRun), in ONE
// transaction: the admission is decided again on rows locked in the publication order (run ->
// issue -> coordinator; decideUnsafeReplay), the run's stale open unsafe-archive actions are cleared,
// the omission barrier (a succeeded `workspace_finalize` operation marked omitted) is written,
// the coordinator takes its one replay edge (terminal_failure -> arbitrating), the run is running
// again and its claim's status version is re-recorded (the failure's own `blocked` was the only
// move since the claim, so the status arbiter applies the saved outcome and still enforces the
// task's current ownership and gates). A refusal is recorded once, in the run log only; no
// activity notice, repair card or recovery chip is ever created, and no provider turn. The lease
// is left exactly as it is: an existing stop-only intent keeps its cleanup protections (the
// lease cleanup sweep settles it).
import { Prisma, withTransaction, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { isDomainError } from "../../errors";
import { HISTORICAL_UNSAFE_ARCHIVE_CODE } from "../../records/coordinator-phases";
import { replayHistoricalUnsafeFinalization } from "../../records/coordinator";
import { FINALIZE_CHANGES_KEY, recordFinalizeChanges } from "../../finalization/finalize-changes";
import { takeFinalizationOwnership, type OwnershipKey } from "../../finalization/finalization-owner";
import { finalizeRun, type FinalizeRunDeps } from "../../finalization/finalize-run";
import { loadPreparedWorkspace } from "../../finalization/workspace-descriptor";
import { readProcessIdentity } from "../../process/read-process-identity";
import { readNativeClaim } from "../../records/run-json";
import { recordRunEvent } from "../../records/run-log";
import { clearHistoricalUnsafeActions, OPEN_RECOVERY_ACTION_STATUSES, OPEN_RECOVERY_ACTION_STATUSES_SQL } from "../../records/actions";
import { loadRunBinding } from "../../finalization/binding";
import { decideUnsafeReplay, type UnsafeReplayDecision, type UnsafeReplaySnapshot } from "../policies/decide-unsafe-replay";
import { runOnHostSql } from "./host-bound-sweep";
import type { Sweep, SweepLog } from "./sweep";

export interface HistoricalUnsafeUnit {
  runId: string;
  companyId: string;
  issueId: string;
}

export interface HistoricalUnsafeSweepDeps extends FinalizeRunDeps {
  log?: SweepLog;
  /** Issue 23: this worker's host id; only runs of unbound or this host's workspaces are due here. */
  hostId?: string;
}

/** Run-log codes of the sweep (its only diagnostics). A declined run is never selected again. */
export const HISTORICAL_UNSAFE_REPLAYED_EVENT = "finalization.historical_unsafe_replayed";
export const HISTORICAL_UNSAFE_DECLINED_EVENT = "finalization.historical_unsafe_declined";

/** The fixed text of the replay's `workspace_export_omitted` event (no path, no link target: R-UA-4). */
export const HISTORICAL_EXPORT_OMITTED_MESSAGE =
  "An earlier controller rejected this run's workspace export as unsafe; the export was discarded without contacting the provider and the accepted result was kept.";

/** The due selection (through the partial index native_run_finalizations_historical_unsafe). */
export function dueHistoricalUnsafeSql(limit: number, hostId?: string): Prisma.Sql {
  // The code is a literal so that the planner matches the partial index's predicate.
  const code = Prisma.raw(`'${HISTORICAL_UNSAFE_ARCHIVE_CODE}'`);
  return Prisma.sql`
    WITH due AS (
      SELECT f.run_id, f.company_id, f.issue_id, f.updated_at,
             row_number() OVER (PARTITION BY f.company_id ORDER BY f.updated_at, f.run_id) AS company_rank
      FROM native_run_finalizations f
      WHERE f.phase = 'terminal_failure' AND f.failure_code = ${code}
        AND NOT EXISTS (SELECT 1 FROM run_events e WHERE e.run_id = f.run_id AND e.code = ${HISTORICAL_UNSAFE_DECLINED_EVENT})
        -- Another open recovery action of the task defers the replay (decideUnsafeReplay decides
        -- again under the locks); the run's own stale unsafe-archive action does not.
        AND NOT EXISTS (
          SELECT 1 FROM issue_recovery_actions a
          WHERE a.company_id = f.company_id AND a.issue_id = f.issue_id AND a.status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL}
            AND NOT (a.run_id IS NOT DISTINCT FROM f.run_id AND a.cause = ${code})
        )
        AND ${runOnHostSql(Prisma.sql`f.run_id`, hostId)}
    )
    SELECT run_id AS "runId", company_id AS "companyId", issue_id AS "issueId" FROM due
    ORDER BY company_rank, updated_at, run_id
    LIMIT ${limit}`;
}

export function historicalUnsafeSweep(deps: HistoricalUnsafeSweepDeps): Sweep<HistoricalUnsafeUnit> {
  const db: PrismaClient = deps.db;
  return {
    name: "historical_unsafe",
    idOf: (unit) => unit.runId,
    due: (limit) => db.$queryRaw<HistoricalUnsafeUnit[]>(dueHistoricalUnsafeSql(limit, deps.hostId)),
    async handle(unit) {
      const decision = await replayUnderOwnership(deps, unit);
      if (decision === "busy" || decision === "owner_unverified") return `skipped_${decision}`;
      if (decision.kind !== "replay") return decision.kind === "not_historical" ? "not_historical" : `${decision.kind}_${decision.reason}`;
      // The ordinary finalization finds the barrier and arbitrates; a busy run is finished by the
      // finalization sweep (the coordinator is due in arbitrating).
      const outcome = await finalizeRun(deps, { runId: unit.runId });
      deps.log?.info({ runId: unit.runId, outcome: outcome.kind }, "reconciler replayed a historical unsafe export");
      return `replayed_${outcome.kind}`;
    },
  };
}

/** Decides and writes the replay under finalization ownership (R-UA-5: atomic barrier and re-admission). */
export async function replayUnderOwnership(deps: HistoricalUnsafeSweepDeps, unit: HistoricalUnsafeUnit): Promise<UnsafeReplayDecision | "busy" | "owner_unverified"> {
  const key: OwnershipKey = { companyId: unit.companyId, runId: unit.runId, issueId: unit.issueId };
  const controller = deps.controller ?? (await readProcessIdentity(process.pid));
  if (!controller) throw new Error("this process's identity could not be read from /proc");
  // R-RW-1: this owner's receipt names its platform deployment like every other new receipt.
  const taken = await takeFinalizationOwnership({ db: deps.db, databaseUrl: deps.databaseUrl, controller, ...(deps.platform ? { platform: deps.platform } : {}) }, key);
  if (taken.kind === "busy") return "busy";
  // A leftover receipt nobody can prove stopped: the replay never judges it; finalizeRun's hold does.
  if (taken.kind === "owner_unverified") return "owner_unverified";
  try {
    return await withTransaction(deps.db, async (tx) => {
      await taken.ownership.assertPublishable(tx);
      const snapshot = await loadUnsafeReplaySnapshot(tx, key);
      const decision = decideUnsafeReplay(snapshot);
      if (decision.kind === "replay") await writeReplay(tx, key, snapshot, decision, deps.now?.() ?? new Date());
      else if (decision.kind === "decline") await recordDecline(tx, key, decision);
      return decision;
    });
  } finally {
    await taken.ownership.release();
  }
}

async function writeReplay(
  tx: TransactionClient,
  key: OwnershipKey,
  snapshot: UnsafeReplaySnapshot,
  decision: Extract<UnsafeReplayDecision, { kind: "replay" }>,
  now: Date,
): Promise<void> {
  const cleared = await clearHistoricalUnsafeActions(tx, { companyId: key.companyId, runId: key.runId, actionIds: decision.clearActionIds });
  const { attempt } = await tx.nativeRunFinalization.findUniqueOrThrow({ where: { runId: key.runId }, select: { attempt: true } });
  // The omission barrier: what the live path writes when it omits an export (finalize-run.ts).
  const barrier = await tx.workspaceOperation.create({
    data: {
      ...key,
      phase: "workspace_finalize",
      status: "succeeded",
      finishedAt: now,
      metadata: { attempt, written: 0, deleted: 0, unchanged: true, omitted: true, historicalUnsafe: true, [FINALIZE_CHANGES_KEY]: recordFinalizeChanges([], []) },
    },
    select: { id: true },
  });
  if (!(await replayHistoricalUnsafeFinalization(tx, { runId: key.runId, replayedAt: now }))) {
    throw new Error("historical unsafe replay: the coordinator moved under its row lock");
  }
  // The run is the task's execution again; its claim's status version becomes the task's current
  // one (the failure's own move to blocked, checked by decideUnsafeReplay).
  const statusVersion = snapshot.issue?.statusVersion ?? 0;
  const reopened = await tx.$executeRaw`
    UPDATE heartbeat_runs
    SET status = 'running', finished_at = NULL, error_code = NULL, error_message = NULL,
        runner_profile_json = jsonb_set(runner_profile_json, '{nativeClaim,statusVersion}', to_jsonb(${statusVersion}::int)),
        updated_at = now()
    WHERE id = ${key.runId}::uuid AND company_id = ${key.companyId}::uuid AND status = 'failed'`;
  if (reopened !== 1) throw new Error("historical unsafe replay: the run changed under its row lock");
  // R-UA-3, R-UA-4: info level, fixed text, no host path or link target.
  await recordRunEvent(tx, { ...runRef(key), level: "info", code: "workspace_export_omitted", message: HISTORICAL_EXPORT_OMITTED_MESSAGE, payload: { operationId: barrier.id, historical: true } });
  await recordRunEvent(tx, {
    ...runRef(key),
    level: "info",
    code: HISTORICAL_UNSAFE_REPLAYED_EVENT,
    message: "The accepted result of this run, held by an older controller's unsafe-export failure, was re-admitted with its export omitted; finalization applies it now.",
    payload: { operationId: barrier.id, resultId: decision.resultId, clearedActions: cleared },
  });
}

async function recordDecline(tx: TransactionClient, key: OwnershipKey, decision: Extract<UnsafeReplayDecision, { kind: "decline" }>): Promise<void> {
  const already = await tx.runEvent.findFirst({ where: { runId: key.runId, code: HISTORICAL_UNSAFE_DECLINED_EVENT }, select: { id: true } });
  if (already) return;
  await recordRunEvent(tx, { ...runRef(key), level: "info", code: HISTORICAL_UNSAFE_DECLINED_EVENT, message: decision.message, payload: { reason: decision.reason } });
}

function runRef(key: OwnershipKey): { companyId: string; runId: string } {
  return { companyId: key.companyId, runId: key.runId };
}

/** The snapshot decideUnsafeReplay judges, read under the binding's row locks. */
export async function loadUnsafeReplaySnapshot(tx: TransactionClient, key: OwnershipKey): Promise<UnsafeReplaySnapshot> {
  const binding = await loadRunBinding(tx, key);
  const empty: UnsafeReplaySnapshot = {
    run: null, issue: null, coordinator: null, acceptedResultId: null, claimedStatusVersion: null,
    otherActiveRunIds: [], newerRunIds: [], descriptor: null, agentArchived: false, actions: [],
  };
  if (!binding.run || !binding.issue || !binding.coordinator) return { ...empty, run: null };
  const run = await tx.heartbeatRun.findUniqueOrThrow({ where: { id: key.runId }, select: { errorCode: true, createdAt: true, runnerProfileJson: true, agent: { select: { archivedAt: true } } } });
  const issue = await tx.issue.findUniqueOrThrow({ where: { id: binding.issue.id }, select: { statusVersion: true, executionWorkspaceId: true } });
  const coordinator = await tx.nativeRunFinalization.findUniqueOrThrow({ where: { runId: key.runId }, select: { failureCode: true } });
  const newer = await tx.heartbeatRun.findMany({
    where: { companyId: key.companyId, nativeIssueId: binding.issue.id, id: { not: key.runId }, createdAt: { gt: run.createdAt } },
    select: { id: true },
    take: 20,
  });
  let descriptor: UnsafeReplaySnapshot["descriptor"] = null;
  try {
    descriptor = { executionWorkspaceId: (await loadPreparedWorkspace(tx, key)).executionWorkspaceId };
  } catch (error) {
    if (!isDomainError(error)) throw error;
  }
  const actions = await tx.issueRecoveryAction.findMany({
    where: { companyId: key.companyId, OR: [{ issueId: binding.issue.id, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] } }, { runId: key.runId }] },
    select: { id: true, cause: true, status: true, runId: true, resolvedByType: true, outcome: true },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: 200,
  });
  const claim = readNativeClaim(run.runnerProfileJson);
  return {
    run: { ...binding.run, errorCode: run.errorCode },
    issue: { ...binding.issue, statusVersion: issue.statusVersion, executionWorkspaceId: issue.executionWorkspaceId },
    coordinator: { ...binding.coordinator, failureCode: coordinator.failureCode },
    acceptedResultId: binding.acceptedResultId,
    claimedStatusVersion: claim && claim.issueId === binding.issue.id ? claim.statusVersion : null,
    otherActiveRunIds: binding.otherActiveRunIds,
    newerRunIds: newer.map((r) => r.id),
    descriptor,
    agentArchived: run.agent.archivedAt !== null,
    actions,
  };
}
