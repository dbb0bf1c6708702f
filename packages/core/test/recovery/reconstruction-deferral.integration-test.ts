// Why a pending "Continue from saved sources" delivery waits (R-RC-3, R-RC-5) on a real
// PostgreSQL with real files: the discarded export hold of a real run, the intent recorded by the
// real service, passed over by the real delivery sweep while a run holds the task's checkout
// (execution_owner) or the source run's finalization lock is held (active_copyback_owner). The
// deferral is written when its code changes and not on every pass (the row's xmin is unchanged),
// is cleared by the delivery and by a cancellation, and is what the task notice, Recovery details
// and the intent's answer shape read.
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizationLockKey } from "../../src/finalization/finalization-owner";
import { listOpenActionsForIssue, noticeActionsOf } from "../../src/recovery/holds";
import { reconstructWorkspace } from "../../src/recovery/operator/reconstruct-workspace";
import { reconstructionOffer } from "../../src/recovery/reconstruction/offer";
import { DEFERRAL_SEEN_REFRESH_MS, deliverReconstruction, recordDeferral } from "../../src/recovery/reconstruction/deliver-intent";
import { reconstructionDeliverySweep } from "../../src/recovery/sweeps/reconstruction-delivery-sweep";
import { CONTINUING_MESSAGE, deferralMessage, deriveTaskNotice, type TaskNotice } from "../../src/recovery/task-notice";
import { createDestroyedSource, reconstructionRequestFor, type DestroyedSource } from "../support/destroyed-source";
import { createExportHoldPlace, exportHoldInstanceRoot } from "../support/export-hold";

const db = useTestDatabase();
let place: { companyId: string; agentId: string; environmentId: string };
let home = "";

beforeAll(async () => {
  place = await createExportHoldPlace(db.prisma(), "Deferral");
  home = await exportHoldInstanceRoot();
});
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

const T0 = new Date("2026-12-02T01:00:00.000Z");
let clock = T0;
const at = (ms: number) => new Date(T0.getTime() + ms);
const deps = () => ({ db: db.prisma(), instanceRoot: home, now: () => clock });

/** One pass of the reconciler's sweep over this intent (its handle, as the sweep runner calls it). */
async function pass(intentId: string, when: Date): Promise<void> {
  clock = when;
  await reconstructionDeliverySweep(deps()).handle({ intentId });
}

async function intentRow(id: string) {
  const row = await db.prisma().reconstructionIntent.findUniqueOrThrow({ where: { id } });
  // xmin changes with every write of the row (a new tuple version): the proof of "no write".
  const [version] = await db.prisma().$queryRaw<{ xmin: string }[]>`SELECT xmin::text AS xmin FROM reconstruction_intents WHERE id = ${id}::uuid`;
  return { ...row, xmin: version?.xmin };
}

/** The task page's notice, as recovery.forIssue derives it. */
async function notice(source: DestroyedSource): Promise<TaskNotice> {
  const rows = await listOpenActionsForIssue(db.prisma(), place.companyId, source.issueId);
  return deriveTaskNotice(await noticeActionsOf(db.prisma(), place.companyId, rows));
}

/** A run older than the source (not a newer execution) holding the task's checkout: execution_owner at delivery. */
async function checkoutOwner(source: DestroyedSource): Promise<string> {
  const owner = await db.prisma().heartbeatRun.create({ data: { companyId: place.companyId, agentId: place.agentId, nativeIssueId: source.issueId, status: "running", createdAt: new Date(0) } });
  await db.prisma().issue.update({ where: { id: source.issueId }, data: { checkoutRunId: owner.id } });
  return owner.id;
}

async function releaseCheckout(source: DestroyedSource, ownerId: string): Promise<void> {
  await db.prisma().issue.update({ where: { id: source.issueId }, data: { checkoutRunId: null } });
  await db.prisma().heartbeatRun.update({ where: { id: ownerId }, data: { status: "cancelled", finishedAt: new Date(0) } });
}

describe("a deferred reconstruction delivery", () => {
  it("R-RC-5 R-RC-3: a transient refusal is recorded once across several passes, a changed code updates it, the delivery clears it; the notice reads it", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const recorded = await reconstructWorkspace(deps(), await reconstructionRequestFor(db.prisma(), place.companyId, source));
    const id = recorded.intent.id;
    expect(await intentRow(id)).toMatchObject({ deferralCode: null, deferralMessage: null, deferredSince: null, deferralSeenAt: null });
    expect(await notice(source)).toEqual({ kind: "restoring", runId: source.runId, message: CONTINUING_MESSAGE });

    // A run holds the task's checkout: deferred, recorded on the first pass.
    const ownerId = await checkoutOwner(source);
    await pass(id, T0);
    const first = await intentRow(id);
    expect(first).toMatchObject({ status: "pending", deferralCode: "execution_owner", deferralMessage: deferralMessage("execution_owner"), deferredSince: T0, deferralSeenAt: T0 });
    // Passes 5 s apart with the same code write nothing.
    await pass(id, at(5_000));
    await pass(id, at(10_000));
    await pass(id, at(15_000));
    const same = await intentRow(id);
    expect(same.xmin).toBe(first.xmin);
    expect(same.updatedAt).toEqual(first.updatedAt);
    expect(same).toMatchObject({ deferralCode: "execution_owner", deferredSince: T0, deferralSeenAt: T0 });

    // The notice gains the sentence; Recovery details' inputs and the intent's answer carry the code and since when.
    const waiting = await notice(source);
    expect(waiting).toEqual({ kind: "restoring", runId: source.runId, message: CONTINUING_MESSAGE, waiting: deferralMessage("execution_owner") });
    const [action] = await noticeActionsOf(db.prisma(), place.companyId, await listOpenActionsForIssue(db.prisma(), place.companyId, source.issueId));
    expect(action?.reconstruction?.deferral).toEqual({ code: "execution_owner", since: T0, lastSeenAt: T0 });
    const offer = await reconstructionOffer(db.prisma(), { companyId: place.companyId, issueId: source.issueId });
    expect(offer?.pendingIntent?.deferral).toEqual({ code: "execution_owner", message: deferralMessage("execution_owner"), since: T0.toISOString(), lastSeenAt: T0.toISOString() });

    // Still the same code long after: only the last-seen time is refreshed, the since stays.
    await pass(id, at(DEFERRAL_SEEN_REFRESH_MS + 20_000));
    const refreshed = await intentRow(id);
    expect(refreshed.xmin).not.toBe(first.xmin);
    expect(refreshed).toMatchObject({ deferralCode: "execution_owner", deferredSince: T0, deferralSeenAt: at(DEFERRAL_SEEN_REFRESH_MS + 20_000) });
    await pass(id, at(DEFERRAL_SEEN_REFRESH_MS + 25_000));
    expect((await intentRow(id)).xmin).toBe(refreshed.xmin);

    // A copyback owner of the source run meanwhile (its finalization lock held): another code, a new since.
    const T1 = at(DEFERRAL_SEEN_REFRESH_MS + 30_000);
    await withTransaction(db.prisma(), async (tx) => {
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${finalizationLockKey(place.companyId, source.runId)}, 0))::text AS locked`;
      await pass(id, T1);
      await pass(id, at(DEFERRAL_SEEN_REFRESH_MS + 35_000));
    });
    const changed = await intentRow(id);
    expect(changed).toMatchObject({ status: "pending", deferralCode: "active_copyback_owner", deferralMessage: deferralMessage("active_copyback_owner"), deferredSince: T1, deferralSeenAt: T1 });
    expect(await notice(source)).toMatchObject({ kind: "restoring", message: CONTINUING_MESSAGE, waiting: deferralMessage("active_copyback_owner") });

    // The lock released, the checkout still held: back to execution_owner, since restarting.
    const T2 = at(DEFERRAL_SEEN_REFRESH_MS + 40_000);
    await pass(id, T2);
    expect(await intentRow(id)).toMatchObject({ deferralCode: "execution_owner", deferredSince: T2, deferralSeenAt: T2 });

    // The checkout released: delivered, the deferral cleared, normal work.
    await releaseCheckout(source, ownerId);
    await pass(id, at(DEFERRAL_SEEN_REFRESH_MS + 45_000));
    const delivered = await intentRow(id);
    expect(delivered).toMatchObject({ status: "delivered", deferralCode: null, deferralMessage: null, deferredSince: null, deferralSeenAt: null });
    expect(delivered.deliveredRunId).not.toBeNull();
    expect(await notice(source)).toEqual({ kind: "none" });
  });

  it("R-RC-5 R-RC-3: a refusal that cancels the intent clears its deferral; the fresh decision starts with none", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const recorded = await reconstructWorkspace(deps(), await reconstructionRequestFor(db.prisma(), place.companyId, source));
    const ownerId = await checkoutOwner(source);
    await pass(recorded.intent.id, T0);
    expect(await intentRow(recorded.intent.id)).toMatchObject({ deferralCode: "execution_owner" });
    await releaseCheckout(source, ownerId);
    // A person blocks the task after the decision: the delivery is refused for good (human_block).
    await db.prisma().activityLog.create({ data: { companyId: place.companyId, actorType: "user", actorId: null, action: "issue.status_changed", entityType: "issue", entityId: source.issueId, details: { from: "blocked", to: "blocked" } } });
    clock = at(5_000);
    expect(await deliverReconstruction(deps(), recorded.intent.id)).toMatchObject({ kind: "refused", code: "human_block" });
    expect(await intentRow(recorded.intent.id)).toMatchObject({ status: "cancelled", deferralCode: null, deferralMessage: null, deferredSince: null, deferralSeenAt: null });
    const fresh = await reconstructWorkspace(deps(), await reconstructionRequestFor(db.prisma(), place.companyId, source));
    expect(fresh.intent).toMatchObject({ id: recorded.intent.id, status: "pending", deferral: null });
    expect(await notice(source)).toEqual({ kind: "restoring", runId: source.runId, message: CONTINUING_MESSAGE });
  });

  it("R-RC-5 R-RC-3: a wake refusal recorded after its rollback (recordDeferral) words the notice; a row read before a fresh decision writes nothing", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const recorded = await reconstructWorkspace(deps(), await reconstructionRequestFor(db.prisma(), place.companyId, source));
    const read = await db.prisma().reconstructionIntent.findUniqueOrThrow({ where: { id: recorded.intent.id } });
    expect(await recordDeferral(db.prisma(), read, "recovery_hold_open", T0)).toBe("recorded");
    expect(await notice(source)).toEqual({ kind: "restoring", runId: source.runId, message: CONTINUING_MESSAGE, waiting: "Waiting: another recovery action on this task must be settled first." });
    const again = await db.prisma().reconstructionIntent.findUniqueOrThrow({ where: { id: recorded.intent.id } });
    expect(await recordDeferral(db.prisma(), again, "recovery_hold_open", at(5_000))).toBe("unchanged");
    // The same intent as read before a fresh decision replaced it (another decision time): untouched.
    expect(await recordDeferral(db.prisma(), { ...again, createdAt: at(-60_000), deferralCode: null }, "issue_run_active", at(10_000))).toBe("unchanged");
    expect(await intentRow(recorded.intent.id)).toMatchObject({ deferralCode: "recovery_hold_open", deferredSince: T0 });
  });
});
