// Discard of a retained sandbox on a real PostgreSQL and a real local
// sandbox: the export-retry hold of a failed run (stopped through the provider, with the agent's
// unexported file and the board's hold). Refusals write nothing and destroy nothing; the admitted
// discard destroys the sandbox through the pinned plugin, records the confirmed destruction
// receipt on the lease, the given-up files on the acknowledged action, one activity row, and the
// lease leaves the retained list.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { createDefaultRegistry } from "../../src/providers/index";
import { Reconciler } from "../../src/recovery/reconciler";
import { leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { settledRunLeasesSweep } from "../../src/recovery/sweeps/settled-run-leases-sweep";
import { discardRetainedSandbox, DESTRUCTION_RECEIPT_SCHEMA } from "../../src/sandboxes/discard-sandbox";
import { listRetainedSandboxes } from "../../src/sandboxes/list-retained";
import { createExportHold, exportHoldInstanceRoot, type ExportHold } from "../support/export-hold";

const db = useTestDatabase();
let place: { companyId: string; agentId: string; environmentId: string };
let home = "";

beforeAll(async () => {
  const prisma = db.prisma();
  const company = await prisma.company.create({ data: { name: `Discard ${randomUUID()}`, issuePrefix: "ACME" } });
  const environment = await prisma.environment.create({ data: { companyId: company.id, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment" } });
  const agent = await prisma.agent.create({ data: { companyId: company.id, name: "Builder", command: ["/bin/true"], environmentId: environment.id } });
  place = { companyId: company.id, agentId: agent.id, environmentId: environment.id };
  home = await exportHoldInstanceRoot();
});
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

const actor = { type: "user" as const, id: null };
const sandboxDir = (hold: ExportHold) => path.join(hold.instanceRoot, "sandboxes", hold.providerLeaseId);
const deps = () => ({ db: db.prisma(), registry: createDefaultRegistry({ instanceRoot: home }) });

async function state(hold: ExportHold) {
  const prisma = db.prisma();
  return {
    lease: await prisma.environmentLease.findUniqueOrThrow({ where: { id: hold.leaseId } }),
    action: await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: hold.actionId } }),
    activity: await prisma.activityLog.count({ where: { entityId: hold.leaseId, action: "sandbox.discarded" } }),
  };
}

describe("retained sandboxes and the ordinary cleanup", () => {
  it("the lease sweeps never select a retained sandbox: after a reconciler pass it and its files are as they were", async () => {
    const hold = await createExportHold(db.prisma(), place, home);
    const before = await state(hold);
    const sweeps = [leaseCleanupSweep({ db: db.prisma(), registry: deps().registry }), settledRunLeasesSweep({ db: db.prisma(), registry: deps().registry })];
    for (const sweep of sweeps) expect((await sweep.due(500)).map((u) => u.leaseId)).not.toContain(hold.leaseId);
    await new Reconciler({ sweeps }).pass();
    expect(await state(hold)).toEqual(before);
    expect(existsSync(path.join(sandboxDir(hold), "workspace", "report.txt"))).toBe(true);
  });
});

describe("discardRetainedSandbox", () => {
  it("R-ORP-3: refuses while the run's accepted result is still to be copied back from the sandbox (retryable, finalizing): nothing written, nothing destroyed", async () => {
    const prisma = db.prisma();
    const hold = await createExportHold(prisma, place, home);
    const base = { companyId: place.companyId, leaseId: hold.leaseId, providerLeaseId: hold.providerLeaseId, acknowledgedActionIds: [hold.actionId], reason: "copied by hand", actor };
    const coordinator = await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId: hold.runId } });
    for (const phase of ["retryable_failure", "workspace_finalizing"] as const) {
      // The run's copyback waits for the reconciler's retry (or is under way) instead of having spent its budget.
      await prisma.nativeRunFinalization.update({ where: { runId: hold.runId }, data: { phase, failureCode: "provider_export_failed", nextAttemptAt: new Date(Date.now() + 60_000) } });
      const before = await state(hold);
      await expect(discardRetainedSandbox(deps(), base)).rejects.toMatchObject({ code: "copyback_pending", details: { phase } });
      expect(await state(hold)).toEqual(before);
      expect(existsSync(path.join(sandboxDir(hold), "workspace", "report.txt"))).toBe(true);
    }
    // Settled in its hold again: the same request is admitted and destroys the sandbox.
    await prisma.nativeRunFinalization.update({ where: { runId: hold.runId }, data: { phase: coordinator.phase, failureCode: coordinator.failureCode, nextAttemptAt: coordinator.nextAttemptAt } });
    await expect(discardRetainedSandbox(deps(), base)).resolves.toMatchObject({ leaseId: hold.leaseId });
    expect(existsSync(path.join(sandboxDir(hold), "workspace", "report.txt"))).toBe(false);
  });

  it("refuses a wrong allocation id, a missing or unknown acknowledgement and an empty reason: nothing written, nothing destroyed", async () => {
    const hold = await createExportHold(db.prisma(), place, home);
    const before = await state(hold);
    const base = { companyId: place.companyId, leaseId: hold.leaseId, providerLeaseId: hold.providerLeaseId, acknowledgedActionIds: [hold.actionId], reason: "copied by hand", actor };
    await expect(discardRetainedSandbox(deps(), { ...base, providerLeaseId: "another-sandbox" })).rejects.toMatchObject({ code: "allocation_mismatch" });
    await expect(discardRetainedSandbox(deps(), { ...base, acknowledgedActionIds: [] })).rejects.toMatchObject({ code: "acknowledgement_missing", details: { missing: [hold.actionId] } });
    await expect(discardRetainedSandbox(deps(), { ...base, acknowledgedActionIds: [hold.actionId, randomUUID()] })).rejects.toMatchObject({ code: "acknowledgement_unknown" });
    await expect(discardRetainedSandbox(deps(), { ...base, reason: "   " })).rejects.toMatchObject({ code: "reason_required" });
    await expect(discardRetainedSandbox(deps(), { ...base, companyId: randomUUID() })).rejects.toMatchObject({ code: "lease_not_found" });
    expect(await state(hold)).toEqual(before);
    expect(existsSync(path.join(sandboxDir(hold), "workspace", "report.txt"))).toBe(true);
  });

  it("R-EX-6 a discard whose pinned plugin is not available destroys nothing: no other plugin is used, the lease stays retained with the failure recorded and its claim given back", async () => {
    const hold = await createExportHold(db.prisma(), place, home);
    await db.prisma().environmentLease.update({ where: { id: hold.leaseId }, data: { pluginId: "acme.local-gone" } });
    await expect(
      discardRetainedSandbox(deps(), { companyId: place.companyId, leaseId: hold.leaseId, providerLeaseId: hold.providerLeaseId, acknowledgedActionIds: [hold.actionId], reason: "no longer needed", actor }),
    ).rejects.toMatchObject({ code: "provider_plugin_unavailable" });
    const after = await state(hold);
    expect(after.lease.status).toBe("released");
    expect(after.lease.cleanupClaimedBy).toBeNull();
    expect((after.lease.metadata as Record<string, unknown>).failure).toMatchObject({ code: "provider_plugin_unavailable" });
    expect((after.lease.metadata as Record<string, unknown>).sandboxDestructionReceipt).toBeUndefined();
    expect((after.action.evidence as Record<string, unknown>).filesGivenUp).toBeUndefined();
    expect(after.activity).toBe(0);
    expect(existsSync(path.join(sandboxDir(hold), "workspace", "report.txt"))).toBe(true);
  });

  it("destroys through the pinned plugin, records the confirmed destruction receipt and the given-up files, and leaves the retained list; a repeat is refused", async () => {
    const hold = await createExportHold(db.prisma(), place, home);
    expect((await listRetainedSandboxes(db.prisma(), { companyId: place.companyId, limit: 50 })).sandboxes.map((s) => s.leaseId)).toContain(hold.leaseId);
    const result = await discardRetainedSandbox(deps(), {
      companyId: place.companyId,
      leaseId: hold.leaseId,
      providerLeaseId: hold.providerLeaseId,
      acknowledgedActionIds: [hold.actionId],
      reason: "The report was copied to the host by hand; the sandbox is no longer needed.",
      actor,
    });
    expect(result).toMatchObject({ leaseId: hold.leaseId, providerLeaseId: hold.providerLeaseId, actionIds: [hold.actionId] });
    expect(existsSync(sandboxDir(hold))).toBe(false);
    const after = await state(hold);
    expect(after.lease.status).toBe("destroyed");
    expect((after.lease.metadata as Record<string, unknown>).sandboxDestructionReceipt).toMatchObject({ schema: DESTRUCTION_RECEIPT_SCHEMA, confirmed: true, pluginId: "builtin.local", providerLeaseId: hold.providerLeaseId, actionIds: [hold.actionId] });
    expect(after.lease.cleanupClaimedBy).toBeNull();
    // The action stays open and says its files were given up, by whom and why.
    expect(after.action.status).not.toBe("resolved");
    expect((after.action.evidence as Record<string, unknown>).filesGivenUp).toMatchObject({ leaseId: hold.leaseId, reason: expect.stringContaining("copied to the host"), receipt: { requestId: result.receipt.requestId } });
    expect(after.activity).toBe(1);
    expect((await listRetainedSandboxes(db.prisma(), { companyId: place.companyId, limit: 50 })).sandboxes.map((s) => s.leaseId)).not.toContain(hold.leaseId);
    await expect(
      discardRetainedSandbox(deps(), { companyId: place.companyId, leaseId: hold.leaseId, providerLeaseId: hold.providerLeaseId, acknowledgedActionIds: [hold.actionId], reason: "again", actor }),
    ).rejects.toMatchObject({ code: "sandbox_already_destroyed" });
  });
});
