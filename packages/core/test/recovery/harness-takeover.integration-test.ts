// The tenant's automatic takeover through the real harness process (apps/harness) and the Railway
// emulator, on a real PostgreSQL (R-RW-2, R-RW-3, R-RW-4, R-RW-5, R-RW-6): a controller on Railway
// died mid-copy; while its deployment lives the hold stays, once Railway reports it REMOVED the
// receipt is proven, exactly that owner released, and the same run commits its exact files.
import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { importHarnessKeys } from "../../src/platforms/verify-stop-receipt";
import type { RailwayIdentity } from "../../src/platforms/platform-identity";
import { readOwnerUnverifiedEvidence } from "../../src/records/actions/owner-unverified";
import { readFinalizationOwner } from "../../src/records/finalization-owner-receipt";
import { admitStopProof, obtainStopProof, takeOverWithHarness } from "../../src/recovery/harness/harness-takeover";
import type { TenantHarnessConfig } from "../../src/recovery/harness/harness-client";
import { harnessTakeoverSweep } from "../../src/recovery/sweeps/harness-takeover-sweep";
import { listOpenActionsForIssue, noticeActionsOf } from "../../src/recovery/holds";
import { deriveTaskNotice, RESTORING_MESSAGE } from "../../src/recovery/task-notice";
import { RailwayEmulator } from "../support/railway/railway-emulator";
import { startHarness, type HarnessChild } from "../support/railway/harness-process";
import { preparedRun, readTree, writeTree, type World, useWorld } from "../finalization/finalization-fixture";
import { deadIdentity, leaveReceipt, liveDeps, markFinalizing, receiptOf } from "./recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

const FLEET_TOKEN = "fleet-token-of-the-tenants-0123456789";
const STACK = { projectId: "proj-a", environmentId: "env-prod", serviceId: "svc-worker" };
let railway: RailwayEmulator;
let harness: HarnessChild;
let tenant: TenantHarnessConfig;
let foreignKeys: TenantHarnessConfig["keys"];

beforeAll(async () => {
  railway = await new RailwayEmulator("railway-token-of-the-harness").start();
  const signing = await generateKeyPair("Ed25519", { extractable: true });
  harness = await startHarness({
    HARNESS_FLEET_TOKEN: FLEET_TOKEN,
    HARNESS_STACKS: JSON.stringify({ "stack-a": STACK }),
    HARNESS_SIGNING_KEY: JSON.stringify(await exportJWK(signing.privateKey)),
    HARNESS_SIGNING_KID: "harness-1",
    RAILWAY_API_URL: railway.url,
    RAILWAY_API_TOKEN: "railway-token-of-the-harness",
  });
  tenant = { url: harness.url, fleetToken: FLEET_TOKEN, stack: "stack-a", keys: await importHarnessKeys({ keys: [{ ...(await exportJWK(signing.publicKey)), kid: "harness-1" }] }) };
  const other = await generateKeyPair("Ed25519", { extractable: true });
  foreignKeys = await importHarnessKeys({ keys: [{ ...(await exportJWK(other.publicKey)), kid: "harness-1" }] });
}, 60_000);

afterAll(async () => {
  await harness?.stop();
  await railway?.stop();
});

let n = 0;

/** A run whose Railway controller died mid-export: its receipt names the deployment, the hold is open. */
async function heldOnRailway(files: Record<string, string> = { "work/result.txt": "the agent's work\n" }, opts: { platform?: boolean } = {}) {
  n += 1;
  const deployment: RailwayIdentity = { kind: "railway", ...STACK, deploymentId: `dep-takeover-${n}` };
  railway.addDeployment({ id: deployment.deploymentId, status: "SUCCESS", ...STACK });
  const run = await preparedRun(world, "done");
  await writeTree(run.sandbox, files);
  await markFinalizing(db.prisma(), run.runId);
  const receipt = { ...receiptOf(await deadIdentity()), host: `railway-replica-${n}`, ...(opts.platform === false ? {} : { platform: deployment }) };
  await leaveReceipt(db.prisma(), run.runId, receipt);
  const held = await finalizeRun(await liveDeps(world), { runId: run.runId });
  if (held.kind !== "owner_unverified") throw new Error(`expected a hold, got ${held.kind}`);
  const hold = { actionId: held.actionId, companyId: world.companyId, issueId: run.issueId, runId: run.runId };
  return { ...run, deployment, receipt, hold };
}

async function receiptOn(runId: string) {
  return readFinalizationOwner((await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).runnerProfileJson);
}
async function evidenceOf(actionId: string) {
  return readOwnerUnverifiedEvidence((await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: actionId } })).evidence);
}
async function noticeOf(issueId: string) {
  return deriveTaskNotice(await noticeActionsOf(db.prisma(), world.companyId, await listOpenActionsForIssue(db.prisma(), world.companyId, issueId)));
}

describe("automatic takeover through the cloud harness", () => {
  it("R-RW-2 R-RW-3: a live deployment keeps the fence (deployment_live, recorded once); REMOVED is proven, exactly that owner is released and the same run commits its exact files", async () => {
    const h = await heldOnRailway({ "work/result.txt": "the agent's work\n", "work/notes.md": "# kept\n" });
    expect(await takeOverWithHarness(db.prisma(), tenant, h.hold)).toBe("deployment_live");
    expect(await takeOverWithHarness(db.prisma(), tenant, h.hold)).toBe("deployment_live");
    expect(await receiptOn(h.runId)).toMatchObject({ kind: "receipt", receipt: { token: h.receipt.token } });
    expect(await evidenceOf(h.hold.actionId)).toMatchObject({ harnessCheck: { code: "deployment_live" } });
    expect((await evidenceOf(h.hold.actionId))?.attestation).toBeUndefined();
    expect(await db.prisma().runEvent.count({ where: { runId: h.runId, code: "finalization.owner_stop_unproven" } })).toBe(1);
    // The copyback stays fenced meanwhile.
    expect(await finalizeRun(await liveDeps(world), { runId: h.runId })).toMatchObject({ kind: "owner_unverified", actionId: h.hold.actionId });

    railway.setStatus(h.deployment.deploymentId, "REMOVED");
    expect(await takeOverWithHarness(db.prisma(), tenant, h.hold)).toBe("admitted");
    expect(await receiptOn(h.runId)).toEqual({ kind: "none" });
    const evidence = await evidenceOf(h.hold.actionId);
    expect(evidence?.attestation).toMatchObject({ ownerToken: h.receipt.token, actor: { type: "system" }, proof: { kind: "harness_receipt", kid: "harness-1", deployment: h.deployment } });
    expect(await db.prisma().activityLog.count({ where: { action: "recovery.owner_stop_proven", entityId: h.hold.actionId } })).toBe(1);
    expect(await noticeOf(h.issueId)).toMatchObject({ kind: "restoring", message: RESTORING_MESSAGE });

    // The ordinary finalization resumes the accepted result: same run, its files, no new run.
    expect(await finalizeRun(await liveDeps(world), { runId: h.runId })).toMatchObject({ kind: "committed" });
    const tree = await readTree(world.hostPath);
    expect(tree["work/result.txt"]).toBe("the agent's work\n");
    expect(tree["work/notes.md"]).toBe("# kept\n");
    expect(await db.prisma().heartbeatRun.count({ where: { nativeIssueId: h.issueId } })).toBe(1);
    expect(await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: h.runId } })).toMatchObject({ status: "succeeded" });
    expect(await noticeOf(h.issueId)).toEqual({ kind: "none" });
  });

  it("R-RW-3: an owner that changed during verification fails closed, and the replayed valid proof is refused", async () => {
    const h = await heldOnRailway();
    railway.setStatus(h.deployment.deploymentId, "REMOVED");
    const proof = await obtainStopProof(db.prisma(), tenant, h.hold);
    expect(proof).toMatchObject({ kind: "proven", ownerToken: h.receipt.token });
    if (proof.kind !== "proven") throw new Error("unreachable");
    const newer = { ...receiptOf(await deadIdentity(), `newer-owner-token-${n}-0123456789`), platform: h.deployment };
    await leaveReceipt(db.prisma(), h.runId, newer);
    expect(await admitStopProof(db.prisma(), h.hold, proof)).toMatchObject({ kind: "refused", code: "owner_changed" });
    expect(await admitStopProof(db.prisma(), h.hold, proof)).toMatchObject({ kind: "refused", code: "owner_changed" });
    expect(await receiptOn(h.runId)).toMatchObject({ kind: "receipt", receipt: { token: newer.token } });
    expect((await evidenceOf(h.hold.actionId))?.attestation).toBeUndefined();
  });

  it("R-RW-3: two reconcilers' passes over one hold: the second, admitted after the first's takeover and its finalization's own receipt, writes nothing and records no refusal (torture seed 7)", async () => {
    const h = await heldOnRailway();
    railway.setStatus(h.deployment.deploymentId, "REMOVED");
    const first = await obtainStopProof(db.prisma(), tenant, h.hold);
    const second = await obtainStopProof(db.prisma(), tenant, h.hold);
    if (first.kind !== "proven" || second.kind !== "proven") throw new Error(`expected two proofs, got ${first.kind} and ${second.kind}`);
    expect(await admitStopProof(db.prisma(), h.hold, first)).toEqual({ kind: "admitted" });
    // The first pass's reconciler resumes the copyback under its own receipt, on a live deployment.
    const reconciler: RailwayIdentity = { kind: "railway", ...STACK, deploymentId: `dep-reconciler-${n}` };
    railway.addDeployment({ id: reconciler.deploymentId, status: "SUCCESS", ...STACK });
    await leaveReceipt(db.prisma(), h.runId, { ...receiptOf(await deadIdentity(), `reconciler-token-${n}-0123456789`), platform: reconciler });
    expect(await admitStopProof(db.prisma(), h.hold, second)).toEqual({ kind: "already_attested" });
    // A pass that reads the hold after that asks about the reconciler's live deployment: its
    // refusal is not written onto a hold whose stop is proven.
    expect(await takeOverWithHarness(db.prisma(), tenant, h.hold)).toBe("deployment_live");
    const evidence = await evidenceOf(h.hold.actionId);
    expect(evidence?.attestation).toMatchObject({ ownerToken: h.receipt.token, proof: { kind: "harness_receipt" } });
    expect(evidence?.harnessCheck).toBeUndefined();
    expect(await db.prisma().runEvent.count({ where: { runId: h.runId, code: "finalization.owner_stop_unproven" } })).toBe(0);
    expect(await noticeOf(h.issueId)).toMatchObject({ kind: "restoring", message: RESTORING_MESSAGE });
  });

  it("R-RW-4: stop proof alone does not let old work overwrite a reassigned task: the binding check refuses, the fence stays", async () => {
    const h = await heldOnRailway();
    railway.setStatus(h.deployment.deploymentId, "REMOVED");
    const proof = await obtainStopProof(db.prisma(), tenant, h.hold);
    if (proof.kind !== "proven") throw new Error(`expected a proof, got ${proof.kind}`);
    await db.prisma().issue.update({ where: { id: h.issueId }, data: { assigneeAgentId: null } });
    expect(await admitStopProof(db.prisma(), h.hold, proof)).toMatchObject({ kind: "refused", code: "task_reassigned" });
    expect(await receiptOn(h.runId)).toMatchObject({ kind: "receipt", receipt: { token: h.receipt.token } });
    expect(await takeOverWithHarness(db.prisma(), tenant, h.hold)).toBe("task_reassigned");
    expect(await evidenceOf(h.hold.actionId)).toMatchObject({ harnessCheck: { code: "task_reassigned" } });
  });

  it("R-RW-3 R-RW-5: a receipt signed by a key the tenant does not trust, an unknown stack or an unreachable harness prove nothing", async () => {
    const h = await heldOnRailway();
    railway.setStatus(h.deployment.deploymentId, "REMOVED");
    expect(await takeOverWithHarness(db.prisma(), { ...tenant, keys: foreignKeys }, h.hold)).toBe("receipt_signature");
    expect(await takeOverWithHarness(db.prisma(), { ...tenant, stack: "stack-unknown" }, h.hold)).toBe("unknown_stack");
    expect(await takeOverWithHarness(db.prisma(), { ...tenant, fleetToken: "a-wrong-fleet-token-0123456789" }, h.hold)).toBe("unauthorized");
    expect(await takeOverWithHarness(db.prisma(), { ...tenant, url: "http://127.0.0.1:9", timeoutMs: 2000 }, h.hold)).toBe("harness_unavailable");
    expect(await receiptOn(h.runId)).toMatchObject({ kind: "receipt", receipt: { token: h.receipt.token } });
    expect(await evidenceOf(h.hold.actionId)).toMatchObject({ harnessCheck: { code: "harness_unavailable" } });
    expect(await noticeOf(h.issueId)).toMatchObject({ kind: "attention" });
  });

  it("R-RW-6: a legacy receipt (no platform identity) takes the operator path: the harness is not asked and the sweep does not list it", async () => {
    const h = await heldOnRailway(undefined, { platform: false });
    const asked = railway.requests.length;
    expect(await takeOverWithHarness(db.prisma(), tenant, h.hold)).toBe("operator_path");
    const sweep = harnessTakeoverSweep({ db: db.prisma(), harness: tenant });
    expect((await sweep.due(100)).map((u) => u.runId)).not.toContain(h.runId);
    expect(railway.requests.length).toBe(asked);
    expect(await noticeOf(h.issueId)).toMatchObject({ kind: "attention", message: expect.stringContaining("an administrator needs to confirm") });
  });

  it("R-RW-2: the sweep lists a platform hold, pauses it after a refusal, and stops listing it once proven", async () => {
    const h = await heldOnRailway();
    const sweep = harnessTakeoverSweep({ db: db.prisma(), harness: tenant, retryAfterMs: 60_000 });
    expect((await sweep.due(100)).map((u) => u.runId)).toContain(h.runId);
    expect(await sweep.handle(h.hold)).toBe("deployment_live");
    expect((await sweep.due(100)).map((u) => u.runId)).not.toContain(h.runId);
    railway.setStatus(h.deployment.deploymentId, "REMOVED");
    const fresh = harnessTakeoverSweep({ db: db.prisma(), harness: tenant });
    expect(await fresh.handle(h.hold)).toBe("admitted");
    expect((await fresh.due(100)).map((u) => u.runId)).not.toContain(h.runId);
  });
});
