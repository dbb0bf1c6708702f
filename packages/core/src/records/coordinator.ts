// The native finalization coordinator (`native_run_finalizations`, one per run). Every phase
// change is a compare-and-set on the expected phases, so two writers (the live finalizer and the
// reconciler) cannot both move it; the heartbeat mirrors the phase in `native_phase` and
// `result_json.finalizationPhase` in the same statement batch (R-ATT-5 reads them there).
import { Prisma, type TransactionClient } from "@copyback/db/client";
import { DomainError } from "../errors";
import { mergedJsonObject } from "./run-json";
import { canTransition, HISTORICAL_UNSAFE_ARCHIVE_CODE, READMISSION_EDGE, type FinalizationPhase } from "./coordinator-phases";

export interface FinalizationPatch {
  resultId?: string;
  /** "increment" bumps the attempt counter (a new finalization attempt). */
  attempt?: number | "increment";
  failureCode?: string | null;
  failureDetail?: Prisma.InputJsonValue | null;
  nextAttemptAt?: Date | null;
}

export interface AdvanceFinalizationInput {
  runId: string;
  from: readonly FinalizationPhase[];
  to: FinalizationPhase;
  patch?: FinalizationPatch;
}

/**
 * Moves the coordinator of `runId` from one of `from` to `to`. Returns false (and writes
 * nothing) when the coordinator is missing or in another phase: the caller lost the race or
 * the run is already further along. Asking for a transition the state machine forbids is a
 * programming error (DomainError `finalization_transition_invalid`).
 */
export async function advanceFinalization(tx: TransactionClient, input: AdvanceFinalizationInput): Promise<boolean> {
  const illegal = input.from.filter((from) => !canTransition(from, input.to));
  if (input.from.length === 0 || illegal.length > 0) {
    throw new DomainError(
      "invalid",
      "finalization_transition_invalid",
      `The coordinator cannot move from ${illegal.join(", ") || "no phase"} to ${input.to}.`,
      { from: [...input.from], to: input.to },
    );
  }
  const patch = input.patch ?? {};
  const data: Prisma.NativeRunFinalizationUncheckedUpdateManyInput = { phase: input.to };
  if (patch.resultId !== undefined) data.resultId = patch.resultId;
  if (patch.attempt === "increment") data.attempt = { increment: 1 };
  else if (patch.attempt !== undefined) data.attempt = patch.attempt;
  if (patch.failureCode !== undefined) data.failureCode = patch.failureCode;
  if (patch.failureDetail !== undefined) data.failureDetail = patch.failureDetail ?? Prisma.DbNull;
  if (patch.nextAttemptAt !== undefined) data.nextAttemptAt = patch.nextAttemptAt;
  if (input.to === "committed") {
    // R-ATT-5: a committed coordinator has no pending retry.
    data.committedAt = new Date();
    data.nextAttemptAt = null;
  }
  if (input.to === "terminal_failure") data.nextAttemptAt = null;

  const moved = await tx.nativeRunFinalization.updateMany({
    where: { runId: input.runId, phase: { in: [...input.from] } },
    data,
  });
  if (moved.count !== 1) return false;
  await mirrorPhaseOnHeartbeat(tx, input.runId, input.to);
  return true;
}

/**
 * R-EX-2, R-EX-3: the readmission edge (coordinator-phases.ts READMISSION_EDGE): a coordinator
 * that is terminal_failure with exactly the exhausted-retry failure code goes back to
 * result_accepted with a fresh attempt budget and no pending retry. The compare includes the
 * failure code, so no other terminal coordinator can ever be reopened here. `readmission` is kept
 * in failure_detail (the finalization sweep reads it: an export-only retry has no agent turn to wait for).
 */
export async function readmitFinalization(tx: TransactionClient, input: { runId: string; resultId: string; readmission: Prisma.InputJsonObject }): Promise<boolean> {
  const moved = await tx.nativeRunFinalization.updateMany({
    where: { runId: input.runId, phase: READMISSION_EDGE.from, failureCode: READMISSION_EDGE.failureCode, resultId: input.resultId },
    data: { phase: READMISSION_EDGE.to, attempt: 0, failureCode: null, failureDetail: { readmission: input.readmission }, nextAttemptAt: null },
  });
  if (moved.count !== 1) return false;
  await mirrorPhaseOnHeartbeat(tx, input.runId, READMISSION_EDGE.to);
  return true;
}

/**
 * R-UA-5: terminal_failure -> arbitrating for a historical unsafe export only (compare-and-set on
 * the phase AND the failure code, as canReplayHistoricalUnsafe says). The caller writes the omission
 * barrier in the same transaction, under finalization ownership. False when the row moved.
 */
export async function replayHistoricalUnsafeFinalization(tx: TransactionClient, input: { runId: string; replayedAt: Date }): Promise<boolean> {
  const moved = await tx.nativeRunFinalization.updateMany({
    where: { runId: input.runId, phase: "terminal_failure", failureCode: HISTORICAL_UNSAFE_ARCHIVE_CODE },
    data: {
      phase: "arbitrating",
      failureCode: null,
      failureDetail: { historicalUnsafeReplay: { previousFailureCode: HISTORICAL_UNSAFE_ARCHIVE_CODE, replayedAt: input.replayedAt.toISOString() } },
      nextAttemptAt: null,
    },
  });
  if (moved.count !== 1) return false;
  await mirrorPhaseOnHeartbeat(tx, input.runId, "arbitrating");
  return true;
}

/** R-ATT-5: heartbeat_runs.native_phase and result_json.finalizationPhase follow the coordinator. */
async function mirrorPhaseOnHeartbeat(tx: TransactionClient, runId: string, phase: FinalizationPhase): Promise<void> {
  await tx.$executeRaw`
    UPDATE heartbeat_runs
    SET native_phase = ${phase},
        result_json = ${mergedJsonObject("result_json", Prisma.sql`jsonb_build_object('finalizationPhase', ${phase}::text)`)},
        updated_at = now()
    WHERE id = ${runId}::uuid`;
}
