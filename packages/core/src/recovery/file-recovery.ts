// The terminal writer of a native run that fails before its result (R-FO-1, R-FO-3, R-FO-4,
// R-FO-6), shared by the orphan sweep and both of the dispatcher's setup-failure handlers. ONE
// transaction, in this order:
//   1. the run row is locked (and, for the orphan sweep, must still be the version it saw: R-ORP-2);
//   2. the accepted result and the success barrier are re-read: an accepted result keeps its own
//      export path and a finalized export creates no obligation (R-FO-6);
//   3. an owned preparation is settled only through its exact live recovery claim (R-FO-4):
//      another owner, a stale claim or a missing one writes nothing, and the caller runs no
//      cleanup; the orphan sweep takes over the claims of the dead controller it judged;
//   4. the exact bound lease is pinned by a stop-only intent (never released for reuse or
//      destroyed) and the board-owned file-recovery obligation naming run, lease and allocation is
//      opened: both before the terminal writer (R-FO-3);
//   5. the run fails (the task goes to people through the status arbiter).
// The provider hears nothing inside it: the caller's release (or the cleanup sweep after a
// restart) continues the recorded stop-only intent afterwards, so a crash anywhere leaves either
// nothing or all of it.
import { withTransaction, type Prisma, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { hasAgentProcessRecord } from "../records/agent-process";
import { copybackProven } from "../records/copyback-proven";
import { pinLeaseForRecovery, type PinOutcome } from "../leases/stop-intent";
import type { ProcessIdentity } from "../process/process-identity";
import { recordRunEvent } from "../records/run-log";
import { failRunInTransaction } from "../runs/settle-run";
import { lockPreparation, lockRunningPreparations, settlePreparation } from "../records/preparation-claim";
import { openFileRecoveryAction, type FileRecoveryEvidence, type FileRecoveryOrigin } from "../records/actions";
import { decideFailBeforeResult, decideOrphanPreparation, decidePreparationClaim, type ClaimVerdict, type FailBeforeResultDecision } from "./policies/decide-file-recovery";

export interface FailBeforeResultInput {
  runId: string;
  /** The run's stable failure code (process_lost, agent_exit_nonzero, workspace_prepare_failed, ...). */
  code: string;
  message: string;
  origin: FileRecoveryOrigin;
  /** The lease the caller bound to the run; undefined: the run's own lease is looked up. */
  leaseId?: string | null;
  /** R-FO-4: the owned preparation this failure settles and the token the settler holds. */
  preparation?: { operationId: string; token: string };
  /** R-ORP-2 (the orphan sweep): the heartbeat row's xmin it saw; a changed row is a lost race. */
  expectXmin?: string;
  /** The orphan sweep: the dead controller whose running preparations it takes over. */
  deadController?: ProcessIdentity;
  agentProcess?: ProcessIdentity | null;
  agentStop?: FileRecoveryEvidence["agentStop"];
  /**
   * R-FO-1 scope: the executor refused the run before it started the agent in the bound sandbox
   * (decide-file-recovery.ts). Believed only while no agent process is recorded on the run.
   */
  agentNeverStarted?: true;
  /** A run event of the caller's, written in the same transaction when the run fails here. */
  event?: { code: string; message: string; payload?: Prisma.InputJsonObject };
}

export type FailBeforeResultOutcome =
  /** R-ORP-2: the row changed since the sweep's snapshot, or a result was accepted meanwhile. */
  | { kind: "lost_race" }
  | { kind: "already_settled"; status: string }
  /** R-FO-4: not this settler's live claim: nothing written; the caller must not clean up. */
  | { kind: "refused"; reason: Extract<FailBeforeResultDecision, { kind: "refused" }>["reason"] }
  | { kind: "failed"; reason: Extract<FailBeforeResultDecision, { kind: "fail_only" }>["reason"] }
  | { kind: "files_retained"; leaseId: string; actionId: string; pin: PinOutcome["kind"] };

export function failRunBeforeResult(db: PrismaClient, input: FailBeforeResultInput): Promise<FailBeforeResultOutcome> {
  return withTransaction(db, (tx) => failRunBeforeResultInTransaction(tx, input));
}

export async function failRunBeforeResultInTransaction(tx: TransactionClient, input: FailBeforeResultInput): Promise<FailBeforeResultOutcome> {
  const locked = input.expectXmin === undefined
    ? await tx.$queryRaw<{ status: string }[]>`SELECT status::text AS status FROM heartbeat_runs WHERE id = ${input.runId}::uuid FOR UPDATE`
    : // Waits for a publisher holding the row; once it commits, the row's xmin differs and the
      // row no longer qualifies (the WHERE is re-checked on the newest version, R-ORP-2).
      await tx.$queryRaw<{ status: string }[]>`
        SELECT status::text AS status FROM heartbeat_runs
         WHERE id = ${input.runId}::uuid AND xmin::text = ${input.expectXmin} AND status = 'running' FOR UPDATE`;
  if (locked.length !== 1) return input.expectXmin === undefined ? { kind: "already_settled", status: "missing" } : { kind: "lost_race" };
  const run = await tx.heartbeatRun.findUniqueOrThrow({ where: { id: input.runId }, select: { id: true, companyId: true, nativeIssueId: true, status: true, runtimeMode: true, runnerProfileJson: true } });
  // A new statement: its snapshot sees a result committed while this one waited on the row.
  const accepted = await tx.nativeRunResult.findFirst({ where: { runId: run.id, schemaStatus: "accepted" }, select: { id: true } });
  if (accepted && input.expectXmin !== undefined) return { kind: "lost_race" };

  // R-FO-4: the owned preparation, judged under its row lock.
  let claim: ClaimVerdict | null = null;
  if (input.preparation) {
    const operation = await lockPreparation(tx, input.preparation.operationId);
    claim = decidePreparationClaim({ operation, token: input.preparation.token, now: await databaseNow(tx) });
  }
  const orphaned = input.deadController ? await lockRunningPreparations(tx, run.id) : [];
  if (input.deadController) {
    const now = await databaseNow(tx);
    for (const preparation of orphaned) {
      const verdict = decideOrphanPreparation({ claim: preparation.claim, deadController: input.deadController, now });
      if (verdict.kind === "refused") claim = verdict;
    }
  }

  const lease = await lockBoundLease(tx, run.id, input.leaseId);
  const decision = decideFailBeforeResult({
    runStatus: run.status,
    native: run.runtimeMode === "native",
    acceptedResult: accepted !== null,
    exportFinalized: await copybackProven(tx, { companyId: run.companyId, runId: run.id, issueId: run.nativeIssueId }),
    lease,
    claim,
    agentNeverStarted: input.agentNeverStarted === true && !hasAgentProcessRecord(run.runnerProfileJson),
  });
  if (decision.kind === "already_settled") return decision;
  if (decision.kind === "refused") {
    await recordRunEvent(tx, {
      companyId: run.companyId,
      runId: run.id,
      level: "warn",
      code: "workspace.preparation_claim_refused",
      message: `This failure does not hold the preparation's live recovery claim (${decision.reason}); it settles nothing and cleans nothing up.`,
      payload: { reason: decision.reason, code: input.code },
    });
    return decision;
  }

  // R-FO-4: settling the claim and recording the retention share this transaction.
  const settledBy = input.deadController ? "orphan_recovery" : "claim_holder";
  if (input.preparation) await settlePreparation(tx, input.preparation.operationId, { errorCode: input.code, settledBy });
  for (const preparation of orphaned) await settlePreparation(tx, preparation.id, { errorCode: "preparation_interrupted", settledBy });

  let retained: Extract<FailBeforeResultOutcome, { kind: "files_retained" }> | null = null;
  if (decision.kind === "retain_files") {
    // R-FO-1, R-FO-3: pin and obligation first, the terminal writer after, in one transaction.
    const pin = await pinLeaseForRecovery(tx, decision.leaseId);
    const row = await tx.environmentLease.findUniqueOrThrow({ where: { id: decision.leaseId }, select: { id: true, providerLeaseId: true, pluginId: true } });
    const action = await openFileRecoveryAction(tx, {
      companyId: run.companyId,
      issueId: run.nativeIssueId,
      runId: run.id,
      leaseId: row.id,
      providerLeaseId: row.providerLeaseId,
      pluginId: row.pluginId,
      origin: input.origin,
      failureCode: input.code,
      agentProcess: input.agentProcess ? { pid: input.agentProcess.pid, startTime: input.agentProcess.startTime, bootId: input.agentProcess.bootId, host: input.agentProcess.host } : null,
      agentStop: input.agentStop ?? null,
      pin: pin.kind,
    });
    await recordRunEvent(tx, {
      companyId: run.companyId,
      runId: run.id,
      level: "warn",
      code: "run.files_retained",
      message: "The run ended before its result: its sandbox is stopped and retained with the agent's files, and an operator is asked to recover them.",
      payload: { leaseId: row.id, providerLeaseId: row.providerLeaseId, actionId: action.actionId, pin: pin.kind, origin: input.origin },
    });
    retained = { kind: "files_retained", leaseId: row.id, actionId: action.actionId, pin: pin.kind };
  }
  if (input.event) await recordRunEvent(tx, { companyId: run.companyId, runId: run.id, level: "warn", ...input.event });
  const failed = await failRunInTransaction(tx, { runId: run.id, code: input.code, message: input.message });
  if (failed.kind === "already_finished") return { kind: "already_settled", status: failed.status };
  return retained ?? { kind: "failed", reason: decision.kind === "fail_only" ? decision.reason : "no_allocation" };
}

/** The run's bound lease under its row lock: the one named, or the newest that is the run's. */
async function lockBoundLease(tx: TransactionClient, runId: string, leaseId: string | null | undefined): Promise<{ id: string; status: string; providerLeaseId: string | null } | null> {
  if (leaseId === null) return null;
  const rows = leaseId
    ? await tx.$queryRaw<{ id: string; status: string; provider_lease_id: string | null }[]>`
        SELECT id, status::text AS status, provider_lease_id FROM environment_leases WHERE id = ${leaseId}::uuid AND run_id = ${runId}::uuid FOR UPDATE`
    : await tx.$queryRaw<{ id: string; status: string; provider_lease_id: string | null }[]>`
        SELECT id, status::text AS status, provider_lease_id FROM environment_leases
         WHERE run_id = ${runId}::uuid AND status <> 'destroyed'
         ORDER BY updated_at DESC, id LIMIT 1 FOR UPDATE`;
  const row = rows[0];
  return row ? { id: row.id, status: row.status, providerLeaseId: row.provider_lease_id } : null;
}

async function databaseNow(tx: TransactionClient): Promise<Date> {
  const [row] = await tx.$queryRaw<{ now: Date }[]>`SELECT clock_timestamp() AS now`;
  return row?.now ?? new Date();
}
