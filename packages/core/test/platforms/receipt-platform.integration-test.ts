// R-RW-1, R-RW-6 on a real PostgreSQL: the owner receipt a controller writes names its platform
// deployment when it runs on one, and nothing more when it does not; a leftover receipt without
// identity (every receipt written before it existed) or of an unsupported platform keeps today's
// operator path and its quiet notice.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { takeFinalizationOwnership } from "../../src/finalization/finalization-owner";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { FINALIZATION_OWNER_KEY, readFinalizationOwner } from "../../src/records/finalization-owner-receipt";
import { OWNER_UNVERIFIED_CAUSE } from "../../src/records/causes";
import { listOpenActionsForIssue, noticeActionsOf } from "../../src/recovery/holds";
import { deriveTaskNotice } from "../../src/recovery/task-notice";
import type { RailwayIdentity } from "../../src/platforms/platform-identity";
import { CONTROLLER, preparedRun, writeTree, type World, useWorld } from "../finalization/finalization-fixture";
import { deadIdentity, leaveReceipt, liveDeps, markFinalizing, receiptOf } from "../recovery/recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

const RAILWAY: RailwayIdentity = { kind: "railway", projectId: "proj-1", environmentId: "env-1", serviceId: "svc-1", deploymentId: "dep-1" };

async function storedReceipt(runId: string): Promise<Record<string, unknown> | undefined> {
  const run = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
  return (run.runnerProfileJson as Record<string, Record<string, unknown>>)[FINALIZATION_OWNER_KEY];
}

describe("the owner receipt's platform identity", () => {
  it("R-RW-1 a controller on Railway writes project, environment, service and deployment id into its new receipt", async () => {
    const run = await preparedRun(world);
    const taken = await takeFinalizationOwnership(
      { db: db.prisma(), databaseUrl: db.url(), controller: CONTROLLER, platform: RAILWAY },
      { companyId: world.companyId, runId: run.runId, issueId: run.issueId },
    );
    if (taken.kind !== "owned") throw new Error(`expected ownership, got ${taken.kind}`);
    try {
      expect(await storedReceipt(run.runId)).toEqual({ ...taken.ownership.receipt, platform: RAILWAY });
      expect(readFinalizationOwner({ [FINALIZATION_OWNER_KEY]: await storedReceipt(run.runId) })).toMatchObject({ kind: "receipt", receipt: { platform: RAILWAY } });
    } finally {
      await taken.ownership.release();
    }
  });

  it("R-RW-1 finalizeRun's receipt carries the worker's platform while the copy runs, and the copyback commits as before", async () => {
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "railway.txt": "copied\n" });
    let during: Record<string, unknown> | undefined;
    world.provider.faults.onExport = async () => {
      during = await storedReceipt(run.runId);
    };
    try {
      expect(await finalizeRun({ ...world.deps(), platform: RAILWAY }, { runId: run.runId })).toMatchObject({ kind: "committed" });
    } finally {
      world.provider.faults.onExport = undefined;
    }
    expect(during).toMatchObject({ host: CONTROLLER.host, pid: CONTROLLER.pid, platform: RAILWAY });
    expect(await storedReceipt(run.runId)).toBeUndefined();
  });

  it("R-RW-6 a controller on no platform writes the receipt of today, without a platform key", async () => {
    const run = await preparedRun(world, "done");
    let during: Record<string, unknown> | undefined;
    world.provider.faults.onExport = async () => {
      during = await storedReceipt(run.runId);
    };
    try {
      expect(await finalizeRun(world.deps(), { runId: run.runId })).toMatchObject({ kind: "committed" });
    } finally {
      world.provider.faults.onExport = undefined;
    }
    expect(during).toBeDefined();
    expect(Object.keys(during ?? {}).sort()).toEqual(["bootId", "host", "pid", "processStart", "token"]);
  });
});

describe("leftover receipts without a provable platform", () => {
  async function heldWith(receipt: Record<string, unknown>) {
    const run = await preparedRun(world, "done");
    await markFinalizing(db.prisma(), run.runId);
    await leaveReceipt(db.prisma(), run.runId, receipt);
    const outcome = await finalizeRun(await liveDeps(world), { runId: run.runId });
    const notice = deriveTaskNotice(await noticeActionsOf(db.prisma(), world.companyId, await listOpenActionsForIssue(db.prisma(), world.companyId, run.issueId)));
    const actions = await db.prisma().issueRecoveryAction.findMany({ where: { runId: run.runId } });
    return { run, outcome, notice, actions, receiptAfter: await storedReceipt(run.runId) };
  }

  it("R-RW-6 a legacy receipt (no identity) of a controller on another host keeps the operator path: one hold, the quiet notice, the receipt untouched", async () => {
    const legacy = { ...receiptOf(await deadIdentity()), host: "railway-host-that-proves-nothing" };
    const h = await heldWith(legacy);
    expect(h.outcome).toMatchObject({ kind: "owner_unverified", reason: "controller_on_other_host" });
    expect(h.actions.map((a) => a.cause)).toEqual([OWNER_UNVERIFIED_CAUSE]);
    expect(h.notice).toMatchObject({ kind: "attention", cause: OWNER_UNVERIFIED_CAUSE, message: expect.stringContaining("an administrator needs to confirm") });
    expect(h.receiptAfter).toEqual(legacy);
  });

  it("R-RW-6 a receipt of an unsupported platform is a valid receipt (its token names it) that keeps the same operator path", async () => {
    const foreign = { ...receiptOf(await deadIdentity()), host: "elsewhere", platform: { kind: "kubernetes", pod: "worker-7" } };
    const h = await heldWith(foreign);
    expect(h.outcome).toMatchObject({ kind: "owner_unverified", reason: "controller_on_other_host" });
    expect(h.notice).toMatchObject({ kind: "attention", cause: OWNER_UNVERIFIED_CAUSE });
    expect(readFinalizationOwner({ [FINALIZATION_OWNER_KEY]: foreign })).toMatchObject({ kind: "receipt", receipt: { token: foreign.token } });
  });

  it("R-RW-6 a half Railway identity is never completed or guessed: the receipt reads as malformed and an operator is asked", async () => {
    const half = { ...receiptOf(await deadIdentity()), host: "elsewhere", platform: { kind: "railway", projectId: "proj-1" } };
    const h = await heldWith(half);
    expect(h.outcome).toMatchObject({ kind: "owner_unverified", reason: "receipt_malformed" });
    expect(h.receiptAfter).toEqual(half);
  });
});
