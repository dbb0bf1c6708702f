// R-RW-2, R-RW-3, R-RW-4: the automatic takeover of an unverified owner whose receipt names a
// platform deployment. Two steps, never holding a lock across the harness's I/O:
//   1. obtainStopProof: asks the harness about the receipt's exact deployment and verifies the
//      signed receipt (key by kid, audience, expiry, stack, run, owner token, deployment);
//   2. admitStopProof: ONE short transaction, the operator attestation's: the run's advisory lock,
//      the binding snapshot under run, issue and coordinator row locks, decideHarnessTakeover, then
//      exactly that receipt released (token-checked), the proof recorded on the hold and an
//      activity entry. The hold stays open ("Restoring saved work…") until the ordinary
//      reconciler's copyback commits the saved result; no provider turn, waits unchanged.
// Every refusal is a fixed code, recorded on the hold (Recovery details) and in the run log when
// it changes; the fence and the operator path stay as they are.
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { finalizationLockKey } from "../../finalization/finalization-owner";
import { loadRunBinding } from "../../finalization/binding";
import { type ControllerPlatformIdentity, identityInWords, platformProofOf } from "../../platforms/platform-identity";
import { verifyStopReceipt } from "../../platforms/verify-stop-receipt";
import { FINALIZATION_OWNER_KEY, readFinalizationOwner } from "../../records/finalization-owner-receipt";
import { attestationTokenOf, readOwnerUnverifiedEvidence, recordHarnessCheck, recordOwnerAttestation, type StopProof } from "../../records/actions/owner-unverified";
import { recordActivity, SYSTEM_ACTOR } from "../../records/record-activity";
import { recordRunEvent } from "../../records/run-log";
import { askHarness, type TenantHarnessConfig } from "./harness-client";
import { decideHarnessTakeover } from "./decide-harness-takeover";

export interface HoldRef {
  actionId: string;
  companyId: string;
  issueId: string;
  runId: string;
}

export type StopProofAttempt =
  | { kind: "proven"; ownerToken: string; deployment: ControllerPlatformIdentity; proof: StopProof }
  /** No harness can prove this receipt's stop (none, legacy, unsupported or malformed): the operator path (R-RW-6). */
  | { kind: "operator_path" }
  | { kind: "refused"; code: string; message: string };

export async function obtainStopProof(db: PrismaClient, harness: TenantHarnessConfig, hold: HoldRef, now: () => Date = () => new Date()): Promise<StopProofAttempt> {
  const run = await db.heartbeatRun.findFirst({ where: { id: hold.runId, companyId: hold.companyId }, select: { runnerProfileJson: true } });
  const owner = readFinalizationOwner(run?.runnerProfileJson ?? {});
  if (owner.kind !== "receipt") return { kind: "operator_path" };
  const platform = platformProofOf(owner.receipt.platform);
  if (platform.kind !== "harness") return { kind: "operator_path" };
  const request = { stack: harness.stack, runId: hold.runId, ownerToken: owner.receipt.token, deployment: platform.identity };
  const answer = await askHarness(harness, request);
  if (answer.kind === "unavailable") return { kind: "refused", code: "harness_unavailable", message: answer.message };
  if (answer.kind === "refused") return { kind: "refused", code: answer.code, message: answer.message };
  const verdict = await verifyStopReceipt(answer.receipt, harness.keys, { stack: harness.stack, runId: hold.runId, ownerToken: owner.receipt.token, deployment: platform.identity, now: now() });
  if (verdict.kind === "refused") return { kind: "refused", code: verdict.code, message: verdict.message };
  return {
    kind: "proven",
    ownerToken: owner.receipt.token,
    deployment: platform.identity,
    proof: { kind: "harness_receipt", kid: verdict.kid, jti: verdict.claims.jti, receipt: answer.receipt, deployment: platform.identity, verifiedAt: now().toISOString() },
  };
}

export type AdmissionOutcome = { kind: "admitted" } | { kind: "already_attested" } | { kind: "refused"; code: string; message: string };

export async function admitStopProof(db: PrismaClient, hold: HoldRef, proven: Extract<StopProofAttempt, { kind: "proven" }>): Promise<AdmissionOutcome> {
  return withTransaction(db, async (tx): Promise<AdmissionOutcome> => {
    const action = await tx.issueRecoveryAction.findFirst({
      where: { id: hold.actionId, companyId: hold.companyId, issueId: hold.issueId },
      select: { id: true, cause: true, status: true, runId: true, evidence: true },
    });
    if (!action) return { kind: "refused", code: "action_not_found", message: "The recovery action is gone." };
    const evidence = readOwnerUnverifiedEvidence(action.evidence);
    // The operator path's order: advisory lock, then the run, issue and coordinator row locks.
    const [lock] = await tx.$queryRaw<{ locked: boolean }[]>`
      SELECT pg_try_advisory_xact_lock(hashtextextended(${finalizationLockKey(hold.companyId, hold.runId)}, 0)) AS locked`;
    const binding = await loadRunBinding(tx, { companyId: hold.companyId, runId: hold.runId });
    const runRow = binding.run ? await tx.heartbeatRun.findUnique({ where: { id: hold.runId }, select: { runnerProfileJson: true } }) : null;
    const receipt = readFinalizationOwner(runRow?.runnerProfileJson ?? {});
    const decision = decideHarnessTakeover({
      attestation: {
        request: { runId: hold.runId, ownerToken: proven.ownerToken },
        action: {
          cause: action.cause,
          status: action.status,
          runId: action.runId,
          attestationToken: evidence ? attestationTokenOf(evidence) : null,
          receiptSha256: null,
          attestedToken: evidence?.attestation?.ownerToken ?? null,
        },
        lockAcquired: lock?.locked === true,
        receipt: receipt.kind === "receipt" ? { kind: "receipt", token: receipt.receipt.token } : receipt.kind === "malformed" ? { kind: "malformed", sha256: "" } : receipt,
        // The controller ran on a platform, not on this host: the harness's proof replaces the probe.
        liveness: null,
        binding,
      },
      receiptPlatform: receipt.kind === "receipt" ? receipt.receipt.platform : undefined,
      proven: proven.deployment,
    });
    if (decision.kind === "reject") return { kind: "refused", code: decision.code, message: decision.message };
    if (decision.kind === "already_attested") return { kind: "already_attested" };
    const released = await tx.$executeRaw`
      UPDATE heartbeat_runs
      SET runner_profile_json = runner_profile_json - ${FINALIZATION_OWNER_KEY}::text, updated_at = now()
      WHERE company_id = ${hold.companyId}::uuid AND id = ${hold.runId}::uuid AND native_issue_id = ${hold.issueId}::uuid
        AND runtime_mode = 'native' AND runner_profile_json -> ${FINALIZATION_OWNER_KEY} ->> 'token' = ${proven.ownerToken}`;
    if (released !== 1) return { kind: "refused", code: "owner_changed", message: "The run's owner receipt changed during the takeover." };
    const owner = receipt.kind === "receipt" ? receipt.receipt : null;
    const stopEvidence = `Harness receipt ${proven.proof.jti} (key ${proven.proof.kid}): ${identityInWords(proven.deployment)}.`;
    await recordOwnerAttestation(tx, { actionId: action.id, ownerToken: proven.ownerToken, owner, stopEvidence, actor: SYSTEM_ACTOR, proof: proven.proof });
    await recordActivity(tx, {
      companyId: hold.companyId,
      actor: SYSTEM_ACTOR,
      action: "recovery.owner_stop_proven",
      entityType: "issue_recovery_action",
      entityId: action.id,
      details: { issueId: hold.issueId, runId: hold.runId, harnessKid: proven.proof.kid, receiptId: proven.proof.jti, deployment: proven.deployment },
    });
    await recordRunEvent(tx, {
      companyId: hold.companyId,
      runId: hold.runId,
      level: "info",
      code: "finalization.owner_stop_proven",
      message: "The cloud harness proved the previous controller's deployment removed; the reconciler finishes the copyback of the saved result.",
      payload: { actionId: action.id, harnessKid: proven.proof.kid, receiptId: proven.proof.jti },
    });
    return { kind: "admitted" };
  });
}

/** Both steps for one hold; a refusal is recorded on the hold and in the run log when its code changes. */
export async function takeOverWithHarness(db: PrismaClient, harness: TenantHarnessConfig, hold: HoldRef, now?: () => Date): Promise<string> {
  const proof = await obtainStopProof(db, harness, hold, now);
  if (proof.kind === "operator_path") return "operator_path";
  const outcome = proof.kind === "proven" ? await admitStopProof(db, hold, proof) : proof;
  if (outcome.kind !== "refused") return outcome.kind;
  if (await recordHarnessCheck(db, { actionId: hold.actionId, code: outcome.code, message: outcome.message })) {
    await recordRunEvent(db, {
      companyId: hold.companyId,
      runId: hold.runId,
      level: "warn",
      code: "finalization.owner_stop_unproven",
      message: `The cloud harness did not prove the previous controller stopped (${outcome.code}); the copyback stays fenced for an operator.`,
      payload: { actionId: hold.actionId, code: outcome.code, reason: outcome.message },
    });
  }
  return outcome.code;
}
