// The snapshot decideReconstruction reads, loaded inside the caller's transaction under the locks
// the spec names (R-RC-2): the source run's finalization advisory lock (tried, as the finalizer
// and the export retry take it: busy means a copyback owner is active), then row locks on the
// recovery action, the source run, the issue and the lease (run before issue, as publication and
// failRun lock them). The
// attachments' stored bytes are hashed before the transaction (file I/O never runs under row
// locks) and passed in; the rows are read again here so a changed row is seen.
import { createHash } from "node:crypto";
import type { ReconstructionIntent, TransactionClient } from "@copyback/db/client";
import canonicalize from "canonicalize";
import { copybackProven } from "../../records/copyback-proven";
import { finalizationLockKey } from "../../finalization/finalization-owner";
import { readFinalizationOwner } from "../../records/finalization-owner-receipt";
import { loadPreparedWorkspace } from "../../finalization/workspace-descriptor";
import { confirmedDestruction } from "../../leases/destruction-receipt";
import { confirmedStopReceipt } from "../../leases/lease-metadata";
import { isDomainError } from "../../errors";
import { readStopAcknowledgement, readStopRetention } from "../../records/run-stop-records";
import { readExportRetry } from "../../records/actions-export-retry";
import { OPEN_RECOVERY_ACTION_STATUSES, readFilesGivenUp } from "../../records/actions";
import { FILE_RECOVERY_CAUSE } from "../../records/causes";
import type { NewerRunFacts, ReconstructionSnapshot, ReconstructionStage } from "./decide-reconstruction";
import type { StoredBytes } from "./attachment-bytes";
import { readReconstructionAuthority } from "../../records/reconstruction-authority";
import { readAttachmentHashes, readOutcomesDocument } from "./intent-document";

/** The policy's request, with the company and task it is scoped to. */
export type SnapshotRequest = ReconstructionSnapshot["request"] & { companyId: string; issueId: string };

export interface SnapshotInput {
  stage: ReconstructionStage;
  request: SnapshotRequest;
  /** deliver, claim, handoff: the intent being delivered. */
  intent: ReconstructionIntent | null;
  /** claim, handoff: the run being dispatched. */
  dispatchedRunId?: string;
  /** The stored bytes of the attachments, hashed before the transaction. */
  stored: ReadonlyMap<string, StoredBytes | null>;
}

/** How far back a dispatched run's predecessor chain is followed (the budget plus the delivered run and one to see past it). */
const CHAIN_LIMIT = 8;
const NEWER_RUN_LIMIT = 20;

export async function loadReconstructionSnapshot(tx: TransactionClient, input: SnapshotInput): Promise<ReconstructionSnapshot> {
  const { request: r, stage } = input;
  const [lock] = await tx.$queryRaw<{ locked: boolean }[]>`
    SELECT pg_try_advisory_xact_lock(hashtextextended(${finalizationLockKey(r.companyId, r.sourceRunId)}, 0)) AS locked`;
  // Lock order: the dispatched run (claim: already locked by its SKIP LOCKED select), then the
  // recovery action, the source run, the issue and the lease: the order of the resolve service on
  // the same action (action -> run -> issue -> lease). The export retry takes the same advisory
  // lock first, so it and this never wait on each other's rows in opposite orders.
  if (input.dispatchedRunId) await tx.$queryRaw`SELECT id FROM heartbeat_runs WHERE id = ${input.dispatchedRunId}::uuid FOR UPDATE`;
  await tx.$queryRaw`SELECT id FROM issue_recovery_actions WHERE id = ${r.actionId}::uuid AND company_id = ${r.companyId}::uuid FOR UPDATE`;
  await tx.$queryRaw`SELECT id FROM heartbeat_runs WHERE id = ${r.sourceRunId}::uuid AND company_id = ${r.companyId}::uuid FOR UPDATE`;
  await tx.$queryRaw`SELECT id FROM issues WHERE id = ${r.issueId}::uuid AND company_id = ${r.companyId}::uuid FOR UPDATE`;
  await tx.$queryRaw`SELECT id FROM environment_leases WHERE id = ${r.leaseId}::uuid AND company_id = ${r.companyId}::uuid FOR UPDATE`;

  const run = await tx.heartbeatRun.findFirst({
    where: { id: r.sourceRunId, companyId: r.companyId },
    select: { id: true, nativeIssueId: true, agentId: true, status: true, runtimeMode: true, runnerProfileJson: true, createdAt: true },
  });
  const issue = await tx.issue.findFirst({
    where: { id: r.issueId, companyId: r.companyId },
    select: { id: true, status: true, assigneeAgentId: true, executionRunId: true, checkoutRunId: true, statusVersion: true },
  });
  const lease = await tx.environmentLease.findFirst({ where: { id: r.leaseId, companyId: r.companyId } });
  const action = await tx.issueRecoveryAction.findFirst({
    where: { id: r.actionId, companyId: r.companyId },
    select: { id: true, issueId: true, cause: true, status: true, runId: true, leaseId: true, evidence: true, resolutionEvidence: true },
  });
  const coordinator = run ? await tx.nativeRunFinalization.findUnique({ where: { runId: run.id }, select: { phase: true, resultId: true } }) : null;
  const accepted = run
    ? await tx.nativeRunResult.findFirst({ where: { runId: run.id, companyId: r.companyId, issueId: run.nativeIssueId, schemaStatus: "accepted" }, orderBy: { createdAt: "asc" }, select: { id: true } })
    : null;
  let descriptorLeaseId: string | null = null;
  if (run) {
    try {
      descriptorLeaseId = (await loadPreparedWorkspace(tx, { companyId: r.companyId, runId: run.id, issueId: run.nativeIssueId })).leaseId;
    } catch (error) {
      if (!isDomainError(error)) throw error;
    }
  }
  const proven = run ? await copybackProven(tx, { companyId: r.companyId, runId: run.id, issueId: run.nativeIssueId }) : false;
  const destruction = lease ? confirmedDestruction(lease) : null;

  // Owners of the task's execution or checkout that are still queued or running (not the dispatched run).
  const ownerIds = [issue?.executionRunId, issue?.checkoutRunId].filter((id): id is string => !!id && id !== input.dispatchedRunId);
  const owners = ownerIds.length
    ? await tx.heartbeatRun.findMany({ where: { id: { in: ownerIds }, status: { in: ["queued", "running"] } }, select: { id: true } })
    : [];
  const otherOpen = await tx.issueRecoveryAction.findMany({
    where: { companyId: r.companyId, issueId: r.issueId, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] }, id: { not: r.actionId } },
    select: { id: true, cause: true, evidence: true },
    take: 20,
  });
  const otherPending = await tx.reconstructionIntent.findMany({
    where: { companyId: r.companyId, issueId: r.issueId, status: "pending", recoveryActionId: { not: r.actionId } },
    select: { id: true },
    take: 10,
  });

  const chain = input.dispatchedRunId ? await loadChain(tx, input.dispatchedRunId, input.intent?.deliveredRunId ?? null) : null;
  const chainIds = new Set((chain ?? []).map((c) => c.id));
  const newer = run
    ? await tx.heartbeatRun.findMany({
        where: { companyId: r.companyId, nativeIssueId: r.issueId, createdAt: { gt: run.createdAt }, id: { notIn: [run.id, ...chainIds] } },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        select: { id: true, status: true, errorCode: true, runnerProfileJson: true },
        take: NEWER_RUN_LIMIT,
      })
    : [];
  const newerRuns: NewerRunFacts[] = [];
  // This action's own intent (the one being delivered, or the one a fresh decision replaces).
  const ownIntentId = input.intent?.id ?? (await tx.reconstructionIntent.findFirst({ where: { recoveryActionId: r.actionId, companyId: r.companyId }, select: { id: true } }))?.id ?? null;
  for (const n of newer) newerRuns.push(await newerRunFacts(tx, r.companyId, r.issueId, n, ownIntentId));

  // R-RC-5: a later human block: a person set the task to blocked, or changed its assignee, after
  // the intent (the activity rows the console's status and assignment changes write).
  const since = input.intent && stage !== "record" ? input.intent.createdAt : null;
  const humanChangedSince =
    since !== null &&
    (await tx.activityLog.count({
      where: {
        companyId: r.companyId,
        entityType: "issue",
        entityId: r.issueId,
        actorType: { in: ["user", "local_board"] },
        createdAt: { gt: since },
        OR: [{ action: "issue.status_changed", details: { path: ["to"], equals: "blocked" } }, { action: "issue.assigned" }],
      },
    })) > 0;

  const savedHashes = input.intent ? readAttachmentHashes(input.intent.attachmentHashes) : null;
  const attachmentIds = stage === "record" ? r.attachmentIds : (savedHashes ?? []).map((h) => h.attachmentId);
  const attachmentRows = attachmentIds.length
    ? await tx.issueAttachment.findMany({ where: { id: { in: [...attachmentIds] } }, select: { id: true, companyId: true, issueId: true, sha256: true, sizeBytes: true } })
    : [];

  const existingByAction = stage === "record" ? await tx.reconstructionIntent.findFirst({ where: { recoveryActionId: r.actionId, companyId: r.companyId, issueId: r.issueId }, select: { id: true, requestId: true, status: true } }) : null;
  const existingByRequest =
    stage === "record"
      ? await tx.reconstructionIntent.findFirst({ where: { companyId: r.companyId, requestId: r.requestId }, select: { id: true, recoveryActionId: true } })
      : null;
  const exportRetry = action ? readExportRetry(action.evidence) : null;
  const resolvedBy = readResolvedByIntent(action?.resolutionEvidence);
  const document = input.intent ? readOutcomesDocument(input.intent.externalActionOutcomes) : null;

  return {
    stage,
    companyId: r.companyId,
    request: { actionId: r.actionId, sourceRunId: r.sourceRunId, leaseId: r.leaseId, attachmentIds: r.attachmentIds, sourceStatusVersion: r.sourceStatusVersion, requestId: r.requestId },
    existing: { byAction: existingByAction, byRequest: existingByRequest ? { id: existingByRequest.id, actionId: existingByRequest.recoveryActionId } : null },
    intent: input.intent
      ? { id: input.intent.id, status: input.intent.status, deliveredRunId: input.intent.deliveredRunId, saved: document?.decision ?? null, attachmentHashes: savedHashes, createdAt: input.intent.createdAt.getTime() }
      : null,
    action: action
      ? {
          id: action.id,
          issueId: action.issueId,
          cause: action.cause,
          status: action.status,
          runId: action.runId,
          leaseId: action.leaseId,
          exportRetryInFlight: exportRetry?.state === "resuming",
          resolvedByIntentId: action.status === "resolved" ? resolvedBy : null,
        }
      : null,
    lockAcquired: lock?.locked === true,
    sourceRun: run
      ? { id: run.id, issueId: run.nativeIssueId, agentId: run.agentId, status: run.status, runtimeMode: run.runtimeMode, ownerReceipt: readFinalizationOwner(run.runnerProfileJson).kind !== "none" }
      : null,
    coordinator: coordinator ? { phase: coordinator.phase, resultId: coordinator.resultId } : null,
    acceptedResultId: accepted?.id ?? null,
    copybackProven: proven,
    descriptorLeaseId,
    lease: lease
      ? {
          id: lease.id,
          runId: lease.runId,
          destruction: destruction?.kind ?? "missing",
          destructionRequestId: destruction?.kind === "confirmed" ? destruction.receipt.requestId : null,
          claimed: lease.cleanupClaimedUntil !== null && lease.cleanupClaimedUntil.getTime() > Date.now(),
        }
      : null,
    issue,
    executionOwnerRunIds: owners.map((o) => o.id),
    otherOpenActions: otherOpen.map((a) => ({ id: a.id, cause: a.cause, givenUpLeaseId: readFilesGivenUp(a.evidence)?.leaseId ?? null })),
    otherPendingIntentIds: otherPending.map((p) => p.id),
    newerRuns,
    chain,
    humanChangedSince,
    attachments: attachmentRows.map((a) => ({
      id: a.id,
      companyId: a.companyId,
      issueId: a.issueId,
      recordedSha256: a.sha256,
      sizeBytes: Number(a.sizeBytes),
      stored: input.stored.get(a.id) ?? null,
    })),
  };
}

/** The resolution evidence a delivery writes on the action it resolves (deliver-intent.ts). */
export const RECONSTRUCTION_RESOLUTION_SCHEMA = "copyback.reconstruction-delivered.v1";

function readResolvedByIntent(evidence: unknown): string | null {
  if (typeof evidence !== "object" || evidence === null) return null;
  const e = evidence as Record<string, unknown>;
  return e.schema === RECONSTRUCTION_RESOLUTION_SCHEMA && typeof e.intentId === "string" ? e.intentId : null;
}

/** The dispatched run and its predecessors, newest first, up to the delivered run (or CHAIN_LIMIT links). */
async function loadChain(tx: TransactionClient, runId: string, deliveredRunId: string | null): Promise<NonNullable<ReconstructionSnapshot["chain"]>> {
  const chain: NonNullable<ReconstructionSnapshot["chain"]> = [];
  let next: string | null = runId;
  while (next && chain.length < CHAIN_LIMIT) {
    const row: { id: string; agentId: string; wakeReason: string | null; status: string; predecessorRunId: string | null } | null = await tx.heartbeatRun.findUnique({
      where: { id: next },
      select: { id: true, agentId: true, wakeReason: true, status: true, predecessorRunId: true },
    });
    if (!row) break;
    const result = await tx.nativeRunResult.findFirst({ where: { runId: row.id, schemaStatus: "accepted" }, select: { id: true } });
    chain.push({ ...row, acceptedResult: result !== null });
    if (row.id === deliveredRunId) break;
    next = row.predecessorRunId;
  }
  return chain;
}

/** R-RC-6: what a newer run is, as a possible coexisting run-only cancellation. */
async function newerRunFacts(
  tx: TransactionClient,
  companyId: string,
  issueId: string,
  run: { id: string; status: string; errorCode: string | null; runnerProfileJson: unknown },
  ownIntentId: string | null,
): Promise<NewerRunFacts> {
  const ack = readStopAcknowledgement(run.runnerProfileJson);
  const authority = readReconstructionAuthority(run.runnerProfileJson);
  const retention = readStopRetention(run.runnerProfileJson);
  const leases = await tx.environmentLease.findMany({ where: { companyId, runId: run.id }, select: { id: true, pluginId: true, providerLeaseId: true, metadata: true }, take: 10 });
  const repairRow = await tx.issueRecoveryAction.findFirst({
    where: retention?.actionId ? { id: retention.actionId, companyId } : { companyId, issueId, runId: run.id, cause: FILE_RECOVERY_CAUSE },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: { id: true, status: true, outcome: true, resolutionEvidence: true },
  });
  const settled = run.status === "cancelled" || run.status === "failed";
  const withdrawnBeforeWork =
    settled && ownIntentId !== null && authority.kind === "present" && authority.intentId === ownIntentId && leases.length === 0 &&
    (await tx.runEvent.count({ where: { runId: run.id, code: "agent.started" } })) === 0;
  return {
    id: run.id,
    status: run.status,
    errorCode: run.errorCode,
    withdrawnBeforeWork,
    stopAcknowledgementRequestId: ack?.requestId ?? null,
    agentStarted: ack?.agent !== null && ack?.agent !== undefined,
    retention: retention ? { outcome: retention.outcome, leaseId: retention.leaseId, actionId: retention.actionId ?? null } : null,
    leases: leases.map((l) => {
      const receipt = confirmedStopReceipt(l.metadata, l);
      return { id: l.id, stopReceiptRequestId: receipt.kind === "confirmed" ? receipt.receipt.requestId : null };
    }),
    repair: repairRow
      ? {
          actionId: repairRow.id,
          status: repairRow.status,
          outcome: repairRow.outcome,
          externalActions: externalActionsOf(repairRow.resolutionEvidence),
          evidenceSha256: createHash("sha256").update(canonicalize(repairRow.resolutionEvidence ?? null) ?? "null").digest("hex"),
        }
      : null,
  };
}

/** The resolution's verified external-action outcome (resolve-recovery-action.ts: not_performed | not_certified). */
function externalActionsOf(evidence: unknown): string | null {
  if (typeof evidence !== "object" || evidence === null) return null;
  const verified = (evidence as { verified?: unknown }).verified;
  if (typeof verified !== "object" || verified === null) return null;
  const value = (verified as { externalActions?: unknown }).externalActions;
  return typeof value === "string" ? value : null;
}
