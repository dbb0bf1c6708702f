// Operator stop attestation (R-ATT-1..3): the one service behind
//   POST /api/issues/:id/recovery-actions/resume-workspace-finalization (REST),
//   recovery.attestOwnerStop (tRPC) and `copyback recovery attest` (CLI).
// The caller has checked `runtime:confirm_owner_stop` (R-ATT-2). In ONE transaction this takes the
// run's finalization advisory lock (as the maintenance SQL does), loads the snapshot under short
// row locks, asks decideAttestation, and on admission releases exactly the attested receipt,
// records the owner and the operator's evidence on the action and writes one activity row. The
// accepted result, the descriptor, the lease and the task's status are not touched; the action
// stays open until the reconciler's copyback commits (R-ATT-3). A refusal is a DomainError
// `conflict` with a stable code and writes nothing (the transaction rolls back).
import { Prisma, withTransaction, type PrismaClient } from "@copyback/db/client";
import { z } from "zod";
import { conflict, notFound } from "../../errors";
import { finalizationLockKey } from "../../finalization/finalization-owner";
import { FINALIZATION_OWNER_KEY, readFinalizationOwner, readReceiptSha256, receiptSha256Sql } from "../../records/finalization-owner-receipt";
import { probeProcess } from "../../process/read-process-identity";
import { recordActivity, type Actor } from "../../records/record-activity";
import { recordRunEvent } from "../../records/run-log";
import { attestationTokenOf, readOwnerUnverifiedEvidence, recordOwnerAttestation } from "../../records/actions";
import { loadRunBinding } from "../../finalization/binding";
import { decideAttestation } from "../policies/decide-attestation";

/** R-ATT-1: the body of the request, shared by the REST route, the tRPC procedure and the CLI. */
export const attestOwnerStopBody = z.strictObject({
  actionId: z.uuid(),
  runId: z.uuid(),
  ownerToken: z.string().trim().min(1).max(500),
  // The attestation is explicit; anything but `true` is not one.
  controllerAndCopybackStopped: z.literal(true),
  stopEvidence: z.string().trim().min(1).max(20_000),
});
export type AttestOwnerStopBody = z.infer<typeof attestOwnerStopBody>;

export interface AttestOwnerStopInput extends AttestOwnerStopBody {
  companyId: string;
  issueId: string;
  actor: Actor;
}

export interface AttestOwnerStopResult {
  actionId: string;
  runId: string;
  leaseIds: string[];
  /** "attested" the first time; "already_attested" for an idempotent repeat (nothing written). */
  status: "attested" | "already_attested";
}

export async function attestOwnerStop(db: PrismaClient, input: AttestOwnerStopInput): Promise<AttestOwnerStopResult> {
  return withTransaction(db, async (tx) => {
    const action = await tx.issueRecoveryAction.findFirst({
      where: { id: input.actionId, companyId: input.companyId, issueId: input.issueId },
      select: { id: true, cause: true, status: true, runId: true, evidence: true },
    });
    if (!action) throw notFound("The recovery action");
    const evidence = readOwnerUnverifiedEvidence(action.evidence);

    const [lock] = await tx.$queryRaw<{ locked: boolean }[]>`
      SELECT pg_try_advisory_xact_lock(hashtextextended(${finalizationLockKey(input.companyId, input.runId)}, 0)) AS locked`;
    const binding = await loadRunBinding(tx, { companyId: input.companyId, runId: input.runId });
    const runRow = binding.run
      ? await tx.heartbeatRun.findUnique({ where: { id: input.runId }, select: { runnerProfileJson: true } })
      : null;
    const receipt = readFinalizationOwner(runRow?.runnerProfileJson ?? {});
    // A malformed receipt is known by its stored bytes' sha256 (the hold names it).
    const malformedSha256 = receipt.kind === "malformed" ? await readReceiptSha256(tx, input.runId) : null;
    const receiptSha256 = evidence?.ownerToken === null ? (evidence.receiptSha256 ?? null) : null;
    const liveness =
      receipt.kind === "receipt"
        ? await probeProcess({ pid: receipt.receipt.pid, startTime: receipt.receipt.processStart, bootId: receipt.receipt.bootId, host: receipt.receipt.host })
        : null;

    const decision = decideAttestation({
      request: { runId: input.runId, ownerToken: input.ownerToken },
      action: {
        cause: action.cause,
        status: action.status,
        runId: action.runId,
        attestationToken: evidence ? attestationTokenOf(evidence) : null,
        receiptSha256,
        attestedToken: evidence?.attestation?.ownerToken ?? null,
      },
      lockAcquired: lock?.locked === true,
      receipt:
        receipt.kind === "receipt"
          ? { kind: "receipt", token: receipt.receipt.token }
          : receipt.kind === "malformed"
            ? { kind: "malformed", sha256: malformedSha256 ?? "" }
            : receipt,
      liveness,
      binding,
    });
    const leaseIds = evidence?.leaseIds ?? [];
    if (decision.kind === "reject") throw conflict(decision.code, decision.message, { actionId: action.id, runId: input.runId });
    if (decision.kind === "already_attested") return { actionId: action.id, runId: input.runId, leaseIds, status: "already_attested" as const };

    // Exactly the attested receipt (the token comparison cannot release a newer owner; for a
    // malformed receipt, the comparison of its stored bytes' sha256).
    const sameReceipt =
      receiptSha256 !== null
        ? Prisma.sql`${receiptSha256Sql()} = ${receiptSha256}`
        : Prisma.sql`runner_profile_json -> ${FINALIZATION_OWNER_KEY} ->> 'token' = ${input.ownerToken}`;
    const released = await tx.$executeRaw(Prisma.sql`
      UPDATE heartbeat_runs
      SET runner_profile_json = runner_profile_json - ${FINALIZATION_OWNER_KEY}::text, updated_at = now()
      WHERE company_id = ${input.companyId}::uuid AND id = ${input.runId}::uuid AND native_issue_id = ${input.issueId}::uuid
        AND runtime_mode = 'native'
        AND ${sameReceipt}`);
    if (released !== 1) throw conflict("owner_changed", "The run's owner receipt changed during the attestation.", { actionId: action.id, runId: input.runId });
    const owner = receipt.kind === "receipt" ? receipt.receipt : null;
    await recordOwnerAttestation(tx, { actionId: action.id, ownerToken: input.ownerToken, owner, stopEvidence: input.stopEvidence, actor: input.actor });
    await recordActivity(tx, {
      companyId: input.companyId,
      actor: input.actor,
      action: "recovery.owner_stop_attested",
      entityType: "issue_recovery_action",
      entityId: action.id,
      details: { issueId: input.issueId, runId: input.runId, stopEvidence: input.stopEvidence },
    });
    await recordRunEvent(tx, {
      companyId: input.companyId,
      runId: input.runId,
      level: "info",
      code: "finalization.owner_stop_attested",
      message: "An operator attested that the previous controller and its copyback stopped; the reconciler finishes the copyback of the saved result.",
      payload: { actionId: action.id },
    });
    return { actionId: action.id, runId: input.runId, leaseIds, status: "attested" as const };
  });
}
