// "Continue from saved sources" (R-RC-1..R-RC-6) on a real PostgreSQL with real files: the source
// is the export hold of a failed run whose real local sandbox was discarded through the real
// Discard service (its confirmed destruction receipt), with attachments whose bytes sit in the
// attachment store under the instance root. Through the service (record), the delivery (a fresh
// run in one transaction), the dispatch claim and the handoff gate.
import { createHash, randomUUID } from "node:crypto";
import { writeFile, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizationLockKey } from "../../src/finalization/finalization-owner";
import { LEASE_METADATA_KEYS, STOP_RECEIPT_SCHEMA } from "../../src/leases/lease-metadata";
import { reconstructWorkspace, type ReconstructWorkspaceInput } from "../../src/recovery/operator/reconstruct-workspace";
import { reconstructionOffer } from "../../src/recovery/reconstruction/offer";
import { RESOLUTION_EVIDENCE_SCHEMA } from "../../src/recovery/operator/resolve-recovery-action";
import { RECONSTRUCTION_RETRY_BUDGET } from "../../src/recovery/reconstruction/decide-reconstruction";
import { deliverReconstruction } from "../../src/recovery/reconstruction/deliver-intent";
import { reconstructionGate } from "../../src/recovery/reconstruction/dispatch-gate";
import { reconstructionDeliverySweep } from "../../src/recovery/sweeps/reconstruction-delivery-sweep";
import { claimQueuedRuns } from "../../src/dispatch/claim-runs";
import { retryRun } from "../../src/runs/retry-run";
import { STOP_ACKNOWLEDGEMENT_SCHEMA, STOP_RETENTION_SCHEMA } from "../../src/records/run-stop-records";
import { createDestroyedSource, createRetainedSource, createStoredAttachment, reconstructionRequestFor, type DestroyedSource } from "../support/destroyed-source";
import { createExportHoldPlace, exportHoldInstanceRoot } from "../support/export-hold";
import { CONTROLLER } from "../runs/runs-fixture";

const db = useTestDatabase();
let place: { companyId: string; agentId: string; environmentId: string };
let other: { companyId: string; agentId: string; environmentId: string };
let home = "";
const actor = { type: "user" as const, id: null };

beforeAll(async () => {
  place = await createExportHoldPlace(db.prisma(), "Reconstruct");
  other = await createExportHoldPlace(db.prisma(), "Other");
  home = await exportHoldInstanceRoot();
});
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

const deps = () => ({ db: db.prisma(), instanceRoot: home });

function request(source: DestroyedSource, overrides: Partial<ReconstructWorkspaceInput> = {}): Promise<ReconstructWorkspaceInput> {
  return reconstructionRequestFor(db.prisma(), place.companyId, source, { actor, ...overrides });
}

/** The rows reconstruction must never write: the old run, its result, its descriptor, its failed finalization, its lease. */
async function sourceRows(source: DestroyedSource) {
  const prisma = db.prisma();
  return JSON.stringify({
    run: await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: source.runId } }),
    results: await prisma.nativeRunResult.findMany({ where: { runId: source.runId }, orderBy: { id: "asc" } }),
    operations: await prisma.workspaceOperation.findMany({ where: { runId: source.runId }, orderBy: { id: "asc" } }),
    coordinator: await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId: source.runId } }),
    lease: await prisma.environmentLease.findUniqueOrThrow({ where: { id: source.leaseId } }),
  });
}

async function written(source: DestroyedSource) {
  const prisma = db.prisma();
  return {
    intents: await prisma.reconstructionIntent.count({ where: { issueId: source.issueId } }),
    activity: await prisma.activityLog.count({ where: { action: { startsWith: "recovery.reconstruction" }, entityId: source.actionId } }),
    runs: await prisma.heartbeatRun.count({ where: { nativeIssueId: source.issueId } }),
    issue: await prisma.issue.findUniqueOrThrow({ where: { id: source.issueId } }),
    action: await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: source.actionId } }),
  };
}

async function refusedWithNothingWritten(source: DestroyedSource, input: ReconstructWorkspaceInput, code: string) {
  const before = await written(source);
  const rows = await sourceRows(source);
  await expect(reconstructWorkspace(deps(), input)).rejects.toMatchObject({ code });
  expect(await written(source)).toEqual(before);
  expect(await sourceRows(source)).toBe(rows);
}

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

describe("reconstructWorkspace (record)", () => {
  it("R-RC-1 R-RC-3 a discarded sandbox: the intent is recorded with the stored bytes' hashes, one activity row, and the old run, result, descriptor and failed finalization are byte-identical", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const rows = await sourceRows(source);
    const input = await request(source);
    const outcome = await reconstructWorkspace(deps(), input);
    expect(outcome.kind).toBe("recorded");
    expect(outcome.intent).toMatchObject({
      status: "pending",
      actionId: source.actionId,
      sourceRunId: source.runId,
      leaseId: source.leaseId,
      requestId: input.requestId,
      deliveredRunId: null,
      attachmentHashes: [{ attachmentId: source.attachmentIds[0], sha256: sha("# What the agent did\n- edited README\n"), sizeBytes: 37 }],
    });
    const row = await db.prisma().reconstructionIntent.findUniqueOrThrow({ where: { id: outcome.intent.id } });
    expect(row).toMatchObject({ description: input.description, sourceStatusVersion: input.sourceStatusVersion, status: "pending" });
    expect(row.externalActionOutcomes).toMatchObject({ observed: [{ action: "opened a pull request", outcome: "not_performed" }], decision: { descriptorLeaseId: source.leaseId, retryBudget: RECONSTRUCTION_RETRY_BUDGET, laterCancellations: [] } });
    expect(await sourceRows(source)).toBe(rows);
    expect((await written(source)).activity).toBe(1);
    // The hold stays open until the delivery; nothing is queued yet.
    expect((await written(source)).action.status).toBe("active");
    expect((await written(source)).runs).toBe(1);
  });

  it("R-RC-3 repeated submissions (the same request id, or the same action with another one) adopt the first intent and write nothing", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const input = await request(source);
    const first = await reconstructWorkspace(deps(), input);
    const after = await written(source);
    const again = await reconstructWorkspace(deps(), input);
    expect(again).toEqual({ kind: "adopted", intent: first.intent });
    const other = await reconstructWorkspace(deps(), { ...input, requestId: "another-request", description: "something else", attachmentIds: [] });
    expect(other).toEqual({ kind: "adopted", intent: first.intent });
    expect(await written(source)).toEqual(after);
    // A request id already used for another action is refused, not adopted.
    const second = await createDestroyedSource(db.prisma(), place, home);
    await refusedWithNothingWritten(second, await request(second, { requestId: input.requestId }), "request_reused");
  });

  it("R-RC-3 two first submissions at once record one intent: the other adopts it (the action's row lock serializes them)", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const [a, b] = await Promise.all([reconstructWorkspace(deps(), await request(source)), reconstructWorkspace(deps(), await request(source))]);
    expect([a.kind, b.kind].sort()).toEqual(["adopted", "recorded"]);
    expect(a.intent.id).toBe(b.intent.id);
    expect((await written(source)).intents).toBe(1);
    expect((await written(source)).activity).toBe(1);
  });

  it("R-RC-2 another company cannot read or adopt a task's intent through its action id", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    await reconstructWorkspace(deps(), await request(source));
    const theirs = await createDestroyedSource(db.prisma(), other, home);
    await expect(reconstructWorkspace(deps(), { ...(await request(theirs)), companyId: other.companyId, actionId: source.actionId })).rejects.toMatchObject({ code: "action_not_found" });
  });

  it("R-RC-1 a retained (not destroyed) sandbox is refused source_not_destroyed and nothing is written", async () => {
    const source = await createRetainedSource(db.prisma(), place, home);
    await refusedWithNothingWritten(source, await request(source), "source_not_destroyed");
  });

  it("R-RC-1 the offer of the task's recovery notice: only after the exact lease's confirmed destruction", async () => {
    const retained = await createRetainedSource(db.prisma(), place, home);
    expect(await reconstructionOffer(db.prisma(), { companyId: place.companyId, issueId: retained.issueId })).toBeNull();
    const destroyed = await createDestroyedSource(db.prisma(), place, home);
    const offer = await reconstructionOffer(db.prisma(), { companyId: place.companyId, issueId: destroyed.issueId });
    expect(offer).toMatchObject({ actionId: destroyed.actionId, sourceRunId: destroyed.runId, leaseId: destroyed.leaseId, statusVersion: 2, pendingIntent: null, attachments: [{ id: destroyed.attachmentIds[0], name: "notes.md", sizeBytes: 37 }] });
    // Another company reads nothing.
    expect(await reconstructionOffer(db.prisma(), { companyId: other.companyId, issueId: destroyed.issueId })).toBeNull();
    const recorded = await reconstructWorkspace(deps(), await request(destroyed));
    expect((await reconstructionOffer(db.prisma(), { companyId: place.companyId, issueId: destroyed.issueId }))?.pendingIntent).toEqual(recorded.intent);
  });

  it("R-RC-2 a stale status version is refused status_version_changed", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    await refusedWithNothingWritten(source, await request(source, { sourceStatusVersion: 1 }), "status_version_changed");
  });

  it("R-RC-2 an attachment of another task or another company is refused foreign_attachment, unread", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const elsewhere = await createDestroyedSource(db.prisma(), place, home);
    await refusedWithNothingWritten(source, await request(source, { attachmentIds: [...source.attachmentIds, elsewhere.attachmentIds[0] as string] }), "foreign_attachment");
    const foreignIssue = await createRetainedSource(db.prisma(), other, home);
    const foreign = await createStoredAttachment(db.prisma(), { companyId: other.companyId, issueId: foreignIssue.issueId }, home, "secret.md", "other company\n");
    await refusedWithNothingWritten(source, await request(source, { attachmentIds: [foreign] }), "foreign_attachment");
  });

  it("R-RC-3 an attachment whose stored bytes no longer match its recorded hash is refused attachment_changed", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const row = await db.prisma().issueAttachment.findUniqueOrThrow({ where: { id: source.attachmentIds[0] } });
    await writeFile(path.join(home, row.storagePath), "tampered\n");
    await refusedWithNothingWritten(source, await request(source), "attachment_changed");
  });

  it("R-RC-2 an active copyback owner (the source run's finalization advisory lock is held) is refused active_copyback_owner", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const input = await request(source);
    const before = await written(source);
    await withTransaction(db.prisma(), async (tx) => {
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${finalizationLockKey(place.companyId, source.runId)}, 0))::text AS locked`;
      await expect(reconstructWorkspace(deps(), input)).rejects.toMatchObject({ code: "active_copyback_owner" });
    });
    expect(await written(source)).toEqual(before);
  });

  it("R-RC-2 an unreconciled newer execution of the task is refused newer_execution", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    await db.prisma().heartbeatRun.create({ data: { companyId: place.companyId, agentId: place.agentId, nativeIssueId: source.issueId, status: "succeeded", finishedAt: new Date() } });
    await refusedWithNothingWritten(source, await request(source), "newer_execution");
  });

  it("R-RC-2 competing recovery: another open recovery action of the task is refused competing_recovery", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    await db.prisma().issueRecoveryAction.create({
      data: { companyId: place.companyId, issueId: source.issueId, cause: "native_workspace_finalization_owner_unverified", fingerprint: randomUUID(), ownerType: "board", status: "active", evidence: {}, nextAction: "x" },
    });
    await refusedWithNothingWritten(source, await request(source), "competing_recovery");
  });

  it("R-RC-4 an in_progress task after an older run-only Stop is accepted only with no execution or checkout owner", async () => {
    const held = await createDestroyedSource(db.prisma(), place, home);
    const owner = await db.prisma().heartbeatRun.create({ data: { companyId: place.companyId, agentId: place.agentId, nativeIssueId: held.issueId, status: "running", createdAt: new Date(0) } });
    await db.prisma().issue.update({ where: { id: held.issueId }, data: { status: "in_progress", checkoutRunId: owner.id } });
    await refusedWithNothingWritten(held, await request(held), "execution_owner");

    const free = await createDestroyedSource(db.prisma(), place, home);
    await db.prisma().issue.update({ where: { id: free.issueId }, data: { status: "in_progress", checkoutRunId: null } });
    expect((await reconstructWorkspace(deps(), await request(free))).kind).toBe("recorded");
  });

  it("R-RC-6 a later run-only cancellation coexists only after its Stop acknowledgement, stopped lease receipt and file-only repair with not_performed; the identities are saved", async () => {
    const certified = await createDestroyedSource(db.prisma(), place, home);
    const cancellation = await laterCancellation(certified, "not_performed");
    const outcome = await reconstructWorkspace(deps(), await request(certified));
    const row = await db.prisma().reconstructionIntent.findUniqueOrThrow({ where: { id: outcome.intent.id } });
    expect(row.externalActionOutcomes).toMatchObject({
      decision: { laterCancellations: [{ runId: cancellation.runId, stopAcknowledgementRequestId: cancellation.ackRequestId, leaseReceipts: [{ leaseId: cancellation.leaseId, requestId: cancellation.stopRequestId }], repair: { actionId: cancellation.repairActionId } }] },
    });
    const cancelledRun = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: cancellation.runId } });
    expect(cancelledRun.status).toBe("cancelled");

    const uncertified = await createDestroyedSource(db.prisma(), place, home);
    await laterCancellation(uncertified, "not_certified");
    await refusedWithNothingWritten(uncertified, await request(uncertified), "external_action_uncertain");
  });
});

describe("delivery, claim and handoff (R-RC-5)", () => {
  it("R-RC-5 delivery creates exactly one fresh run of the task's agent with the context; counts unchanged; the claim starts it and the handoff admits it", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const recorded = await reconstructWorkspace(deps(), await request(source));
    const coordinatorBefore = await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: source.runId } });
    const actionBefore = await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: source.actionId } });
    const rows = await sourceRows(source);

    const sweep = reconstructionDeliverySweep(deps());
    expect(await sweep.due(10)).toContainEqual({ intentId: recorded.intent.id });
    expect(await sweep.handle({ intentId: recorded.intent.id })).toBe("delivered");
    expect(await sweep.due(10)).not.toContainEqual({ intentId: recorded.intent.id });
    expect(await deliverReconstruction(deps(), recorded.intent.id)).toEqual({ kind: "not_pending", intentId: recorded.intent.id });

    const runs = await db.prisma().heartbeatRun.findMany({ where: { nativeIssueId: source.issueId, id: { not: source.runId } } });
    expect(runs).toHaveLength(1);
    const fresh = runs[0]!;
    expect(fresh).toMatchObject({ status: "queued", agentId: place.agentId, wakeReason: "reconstruction", predecessorRunId: null });
    const intent = await db.prisma().reconstructionIntent.findUniqueOrThrow({ where: { id: recorded.intent.id } });
    expect(intent).toMatchObject({ status: "delivered", deliveredRunId: fresh.id });
    const action = await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: source.actionId } });
    expect(action).toMatchObject({ status: "resolved", outcome: "reconstructed", attemptCount: actionBefore.attemptCount, maxAttempts: actionBefore.maxAttempts });
    expect(await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: source.runId } })).toEqual(coordinatorBefore);
    expect(await sourceRows(source)).toBe(rows);
    const event = await db.prisma().runEvent.findFirstOrThrow({ where: { runId: fresh.id, code: "reconstruction.delivered" } });
    expect(event.payload).toMatchObject({
      description: "Rebuild the README changes described in notes.md",
      attachments: [{ attachmentId: source.attachmentIds[0], sha256: sha("# What the agent did\n- edited README\n"), name: "notes.md" }],
      externalActionOutcomes: [{ action: "opened a pull request", outcome: "not_performed" }],
    });
    // The event quotes the decision; the evidence and the full context stay with the intent and the run.
    expect(event.payload).toMatchObject({ descriptionChars: "Rebuild the README changes described in notes.md".length, contextSha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(JSON.stringify(event.payload)).not.toContain("evidence");

    const claimed = await claimQueuedRuns(db.prisma(), { limit: 10, controller: CONTROLLER, instanceRoot: home });
    expect(claimed.map((c) => c.runId)).toContain(fresh.id);
    const gate = await withTransaction(db.prisma(), (tx) => reconstructionGate(tx, { runId: fresh.id, stage: "handoff", instanceRoot: home }));
    expect(gate).toMatchObject({ kind: "admit", intentId: intent.id, context: { sourceRunId: source.runId, attachments: [{ attachmentId: source.attachmentIds[0] }] } });
  });

  it("R-RC-5 the delivery sweep's due selection can go through its partial index (O(due), not a scan of all intents)", async () => {
    const plan = await db.prisma().$transaction(async (tx) => {
      await tx.$executeRaw`SET LOCAL enable_seqscan = off`;
      return tx.$queryRaw<{ "QUERY PLAN": unknown }[]>`
        EXPLAIN (FORMAT JSON) WITH due AS (
          SELECT id, created_at, row_number() OVER (PARTITION BY company_id ORDER BY created_at, id) AS company_rank
          FROM reconstruction_intents WHERE status = 'pending')
        SELECT id AS "intentId" FROM due ORDER BY company_rank, created_at, id LIMIT 50`;
    });
    expect(JSON.stringify(plan)).toContain("reconstruction_intents_pending");
  });

  it("R-RC-5 a transient refusal at delivery (another hold opened meanwhile) keeps the intent pending for a later pass", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const recorded = await reconstructWorkspace(deps(), await request(source));
    const other = await db.prisma().issueRecoveryAction.create({
      data: { companyId: place.companyId, issueId: source.issueId, cause: "native_workspace_finalization_owner_unverified", fingerprint: randomUUID(), ownerType: "board", status: "active", evidence: {}, nextAction: "x" },
    });
    expect(await deliverReconstruction(deps(), recorded.intent.id)).toMatchObject({ kind: "refused", code: "competing_recovery" });
    expect((await db.prisma().reconstructionIntent.findUniqueOrThrow({ where: { id: recorded.intent.id } })).status).toBe("pending");
    await db.prisma().issueRecoveryAction.update({ where: { id: other.id }, data: { status: "resolved", resolvedAt: new Date() } });
    expect(await deliverReconstruction(deps(), recorded.intent.id)).toMatchObject({ kind: "delivered" });
  });

  it("R-RC-5 a changed attachment at claim stops the run: cancelled, the task left as it is", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const recorded = await reconstructWorkspace(deps(), await request(source));
    const delivered = await deliverReconstruction(deps(), recorded.intent.id);
    if (delivered.kind !== "delivered") throw new Error(`not delivered: ${JSON.stringify(delivered)}`);
    const row = await db.prisma().issueAttachment.findUniqueOrThrow({ where: { id: source.attachmentIds[0] } });
    await writeFile(path.join(home, row.storagePath), "changed after the decision\n");
    const issueBefore = await db.prisma().issue.findUniqueOrThrow({ where: { id: source.issueId } });
    const claimed = await claimQueuedRuns(db.prisma(), { limit: 10, controller: CONTROLLER, instanceRoot: home });
    expect(claimed.map((c) => c.runId)).not.toContain(delivered.runId);
    expect(await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: delivered.runId } })).toMatchObject({ status: "cancelled", errorCode: "attachment_changed" });
    expect(await db.prisma().issue.findUniqueOrThrow({ where: { id: source.issueId } })).toEqual(issueBefore);
    // The decision is withdrawn: the intent cancelled, the hold open again for a fresh decision.
    expect(await db.prisma().reconstructionIntent.findUniqueOrThrow({ where: { id: recorded.intent.id } })).toMatchObject({ status: "cancelled", deliveredRunId: delivered.runId });
    expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: source.actionId } })).toMatchObject({ status: "active", outcome: null, resolvedAt: null });
    expect(await db.prisma().activityLog.count({ where: { action: "recovery.reconstruction_withdrawn", entityId: source.actionId } })).toBe(1);
    // A fresh decision (without the changed attachment) replaces it; the withdrawn run, which never
    // had a sandbox nor started its agent, does not count as a newer execution.
    const fresh = await reconstructWorkspace(deps(), await request(source, { attachmentIds: [] }));
    expect(fresh).toMatchObject({ kind: "recorded", intent: { id: recorded.intent.id, status: "pending", attachmentHashes: [] } });
    const again = await deliverReconstruction(deps(), recorded.intent.id);
    expect(again).toMatchObject({ kind: "delivered" });
    if (again.kind !== "delivered") return;
    expect(again.runId).not.toBe(delivered.runId);
    const claimedAgain = await claimQueuedRuns(db.prisma(), { limit: 10, controller: CONTROLLER, instanceRoot: home });
    expect(claimedAgain.map((c) => c.runId)).toContain(again.runId);
  });

  it("R-RC-5 a later human block is never overwritten by automatic checkout: the delivery and the claim refuse it", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const recorded = await reconstructWorkspace(deps(), await request(source));
    // A person blocks the task again after the intent (the console's status change writes this activity).
    await db.prisma().activityLog.create({ data: { companyId: place.companyId, actorType: "user", actorId: null, action: "issue.status_changed", entityType: "issue", entityId: source.issueId, details: { from: "blocked", to: "blocked" } } });
    expect(await deliverReconstruction(deps(), recorded.intent.id)).toMatchObject({ kind: "refused", code: "human_block" });
    // The decision no longer holds: cancelled, nothing queued, the hold still open; the offer asks again
    // and a fresh decision replaces the cancelled intent (one per action).
    expect((await db.prisma().reconstructionIntent.findUniqueOrThrow({ where: { id: recorded.intent.id } })).status).toBe("cancelled");
    expect((await written(source)).runs).toBe(1);
    expect((await written(source)).action.status).toBe("active");
    expect((await reconstructionOffer(db.prisma(), { companyId: place.companyId, issueId: source.issueId }))?.pendingIntent).toBeNull();
    const fresh = await reconstructWorkspace(deps(), await request(source));
    expect(fresh).toMatchObject({ kind: "recorded", intent: { id: recorded.intent.id, status: "pending" } });
    expect(await deliverReconstruction(deps(), recorded.intent.id)).toMatchObject({ kind: "delivered" });

    // Delivered first, blocked by a person before the claim: the run is cancelled, the block stays.
    const second = await createDestroyedSource(db.prisma(), place, home);
    const intent = await reconstructWorkspace(deps(), await request(second));
    const delivered = await deliverReconstruction(deps(), intent.intent.id);
    if (delivered.kind !== "delivered") throw new Error("not delivered");
    await db.prisma().issue.update({ where: { id: second.issueId }, data: { status: "blocked", statusVersion: { increment: 1 } } });
    await db.prisma().activityLog.create({ data: { companyId: place.companyId, actorType: "user", actorId: null, action: "issue.status_changed", entityType: "issue", entityId: second.issueId, details: { from: "blocked", to: "blocked" } } });
    await claimQueuedRuns(db.prisma(), { limit: 10, controller: CONTROLLER, instanceRoot: home });
    expect(await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: delivered.runId } })).toMatchObject({ status: "cancelled", errorCode: "human_block" });
    expect(await db.prisma().issue.findUniqueOrThrow({ where: { id: second.issueId } })).toMatchObject({ status: "blocked", checkoutRunId: null });
    expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: second.actionId } })).toMatchObject({ status: "active" });
  });

  it("R-RC-5 a bounded retry of the delivered run keeps the same reconstruction authority and is rechecked at claim", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const recorded = await reconstructWorkspace(deps(), await request(source));
    const delivered = await deliverReconstruction(deps(), recorded.intent.id);
    if (delivered.kind !== "delivered") throw new Error("not delivered");
    await claimQueuedRuns(db.prisma(), { limit: 10, controller: CONTROLLER, instanceRoot: home });
    // The delivered run fails without a result (as the executor's failure leaves it).
    await db.prisma().heartbeatRun.update({ where: { id: delivered.runId }, data: { status: "failed", errorCode: "agent_exited", finishedAt: new Date() } });
    await db.prisma().issue.update({ where: { id: source.issueId }, data: { status: "blocked", checkoutRunId: null, statusVersion: { increment: 1 } } });
    const retry = await retryRun(db.prisma(), { companyId: place.companyId, runId: delivered.runId, actor });
    const retried = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: retry.runId } });
    expect(retried.runnerProfileJson).toMatchObject({ reconstruction: { intentId: recorded.intent.id } });
    const claimed = await claimQueuedRuns(db.prisma(), { limit: 10, controller: CONTROLLER, instanceRoot: home });
    expect(claimed.map((c) => c.runId)).toContain(retry.runId);
  });
});

/**
 * A later native run-only cancellation of the task, as Stop, the stop-retention and cleanup and a
 * board file-only repair leave it: the Stop acknowledgement, its lease released with a confirmed
 * stop receipt, and its file-recovery action resolved `restored` with the given external-action outcome.
 */
async function laterCancellation(source: DestroyedSource, externalActions: "not_performed" | "not_certified") {
  const prisma = db.prisma();
  const ackRequestId = randomUUID();
  const stopRequestId = randomUUID();
  const leaseId = randomUUID();
  const run = await prisma.heartbeatRun.create({ data: { companyId: place.companyId, agentId: place.agentId, nativeIssueId: source.issueId, status: "cancelled", errorCode: "run_stopped", finishedAt: new Date() } });
  const workspace = await prisma.issue.findUniqueOrThrow({ where: { id: source.issueId }, select: { executionWorkspaceId: true } });
  await prisma.environmentLease.create({
    data: {
      id: leaseId,
      companyId: place.companyId,
      environmentId: place.environmentId,
      executionWorkspaceId: workspace.executionWorkspaceId,
      runId: run.id,
      issueId: source.issueId,
      provider: "local",
      pluginId: "builtin.local",
      providerLeaseId: `later-${leaseId}`,
      leasePolicy: "reuse_by_environment",
      status: "released",
      releasedAt: new Date(),
      metadata: {
        [LEASE_METADATA_KEYS.stopReceipt]: { schema: STOP_RECEIPT_SCHEMA, method: "environmentStopLease", requestId: stopRequestId, pluginId: "builtin.local", providerLeaseId: `later-${leaseId}`, stoppedAt: new Date().toISOString() },
      },
    },
  });
  const repair = await prisma.issueRecoveryAction.create({
    data: {
      companyId: place.companyId,
      issueId: source.issueId,
      runId: run.id,
      leaseId,
      cause: "native_workspace_file_recovery_required",
      fingerprint: `${run.id}:files`,
      ownerType: "board",
      status: "resolved",
      outcome: "restored",
      evidence: {},
      nextAction: "x",
      resolvedAt: new Date(),
      resolvedByType: "user",
      resolutionEvidence: { schema: RESOLUTION_EVIDENCE_SCHEMA, outcome: "restored", verified: { stopReceiptRequestId: stopRequestId, stoppedExecutionRequestId: ackRequestId, externalActions } },
    },
  });
  const now = new Date().toISOString();
  await prisma.heartbeatRun.update({
    where: { id: run.id },
    data: {
      runnerProfileJson: {
        stopAcknowledgement: { schema: STOP_ACKNOWLEDGEMENT_SCHEMA, requestId: ackRequestId, acknowledgedAt: now, by: "executor", controller: null, agent: { exitCode: null, signal: "SIGTERM" }, leaseId },
        stopRetention: { schema: STOP_RETENTION_SCHEMA, requestId: ackRequestId, outcome: "pinned", reason: "pinned", leaseId, stopIntentRequestId: stopRequestId, by: "executor", recordedAt: now, actionId: repair.id },
      },
    },
  });
  return { runId: run.id, ackRequestId, stopRequestId, leaseId, repairActionId: repair.id };
}
