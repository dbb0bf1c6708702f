// An operator's Discard interrupted after its intent was recorded (found by the torture
// suite): the database went away between the destroy and the final transaction, or the request's
// process died. The recorded intent is resumable: the lease cleanup sweep finishes it once the
// request's short claim lapsed (a live request renews it), a repeat Discard resumes it, and until
// then the Retained list shows the lease as being discarded, never as a sandbox with its files.
// On a real PostgreSQL with a real local sandbox (the export-retry hold of a failed run); the
// interruption is a database client that fails every call from the moment the destroy returned.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma, withTransaction, type PrismaClient } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import type { LeaseProviderRegistry } from "../../src/leases/lease-types";
import { createDefaultRegistry } from "../../src/providers/index";
import { createLocalProvider } from "../../src/providers/local/index";
import { ProviderRegistry } from "../../src/providers/registry";
import { openFileRecoveryAction } from "../../src/records/actions";
import { Reconciler } from "../../src/recovery/reconciler";
import { dueDiscardResumptionsSql, leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { DESTRUCTION_RECEIPT_SCHEMA, discardRetainedSandbox } from "../../src/sandboxes/discard-sandbox";
import { listRetainedSandboxes } from "../../src/sandboxes/list-retained";
import { createExportHold, exportHoldInstanceRoot, type ExportHold } from "../support/export-hold";

const db = useTestDatabase();
let place: { companyId: string; agentId: string; environmentId: string };
let home = "";

beforeAll(async () => {
  const prisma = db.prisma();
  const company = await prisma.company.create({ data: { name: `Discard resume ${randomUUID()}`, issuePrefix: "ACME" } });
  const environment = await prisma.environment.create({ data: { companyId: company.id, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment" } });
  const agent = await prisma.agent.create({ data: { companyId: company.id, name: "Builder", command: ["/bin/true"], environmentId: environment.id } });
  place = { companyId: company.id, agentId: agent.id, environmentId: environment.id };
  home = await exportHoldInstanceRoot();
});
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

const actor = { type: "local_board" as const, id: null };
const REASON = "The report was copied by hand; the sandbox is no longer needed.";
const sandboxDir = (hold: ExportHold) => path.join(hold.instanceRoot, "sandboxes", hold.providerLeaseId);
const registry = () => createDefaultRegistry({ instanceRoot: home });
const request = (hold: ExportHold, actionIds = [hold.actionId]) => ({ companyId: place.companyId, leaseId: hold.leaseId, providerLeaseId: hold.providerLeaseId, acknowledgedActionIds: actionIds, reason: REASON, actor });

/** A database client that fails every call while `down` (a restart, a lost connection). */
function flakyDb(real: PrismaClient) {
  const state = { down: false };
  const client = new Proxy(real, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== "function" || typeof key !== "string" || !key.startsWith("$")) return value;
      return (...args: unknown[]) => {
        if (state.down) return Promise.reject(new Error("Can't reach database server at 127.0.0.1 (connection lost)"));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { client, state };
}

/** A registry whose destroys run for real, counted; `afterDestroy` runs once each returned. */
function countingRegistry(inner: LeaseProviderRegistry, hooks: { afterDestroy?: () => void; beforeDestroy?: () => Promise<void> } = {}) {
  const calls = { destroy: 0 };
  const wrapped: LeaseProviderRegistry = {
    forLease(lease) {
      const plugin = inner.forLease(lease);
      return Object.assign(Object.create(plugin) as typeof plugin, {
        destroy: async (handle: Parameters<NonNullable<typeof plugin.destroy>>[0]) => {
          calls.destroy += 1;
          await hooks.beforeDestroy?.();
          await plugin.destroy!(handle);
          hooks.afterDestroy?.();
        },
      });
    },
  };
  return { registry: wrapped, calls };
}

/** A Discard whose sandbox is destroyed and whose final transaction never reaches the database. */
async function interruptedAfterDestroy(hold: ExportHold) {
  const flaky = flakyDb(db.prisma());
  const { registry: reg } = countingRegistry(registry(), { afterDestroy: () => (flaky.state.down = true) });
  await expect(discardRetainedSandbox({ db: flaky.client, registry: reg, sleep: async () => {} }, request(hold))).rejects.toThrow();
  flaky.state.down = false;
  expect(existsSync(sandboxDir(hold))).toBe(false);
}

async function leaseOf(hold: ExportHold) {
  return db.prisma().environmentLease.findUniqueOrThrow({ where: { id: hold.leaseId } });
}
const intentOf = (lease: { metadata: unknown }) => (lease.metadata as Record<string, Record<string, unknown>>).sandboxDiscard;
async function lapseClaim(hold: ExportHold) {
  await db.prisma().$executeRaw`UPDATE environment_leases SET cleanup_claimed_until = now() - interval '1 second' WHERE id = ${hold.leaseId}::uuid`;
}
async function listed(hold: ExportHold) {
  const { sandboxes } = await listRetainedSandboxes(db.prisma(), { companyId: place.companyId, limit: 500 });
  return sandboxes.find((s) => s.leaseId === hold.leaseId) ?? null;
}
const sweepOf = (reg: LeaseProviderRegistry = registry()) => leaseCleanupSweep({ db: db.prisma(), registry: reg, controller: { host: "test-host", pid: 4242 }, sleep: async () => {} });

describe("a Discard interrupted after the destroy", () => {
  it("R-RC-1: the lease cleanup sweep finishes it once the request's claim lapsed: destroyed with the intent's confirmed receipt, the acknowledged action records its files given up, one activity row; listed as discarding until then, not at all after", async () => {
    const hold = await createExportHold(db.prisma(), place, home);
    await interruptedAfterDestroy(hold);

    const pending = await leaseOf(hold);
    const intent = intentOf(pending)!;
    expect(pending.status).toBe("released");
    expect(intent).toMatchObject({ reason: REASON, actionIds: [hold.actionId], providerLeaseId: hold.providerLeaseId, pluginId: "builtin.local" });
    // The request's claim is short (renewed while it lives), so a dead request is not waited out for 15 minutes.
    expect(pending.cleanupClaimedUntil!.getTime() - Date.now()).toBeLessThanOrEqual(60_000);

    // Until finished: listed, as being discarded (its files may be gone), never with a size or as kept.
    const row = await listed(hold);
    expect(row?.discarding).toMatchObject({ requestId: intent.requestId, reason: REASON });
    expect(row?.size).toBeNull();
    expect(row?.reasons.map((r) => r.kind)).toContain("discarding");
    // The request's claim is live: the sweep leaves it alone.
    expect((await sweepOf().due(500)).map((u) => u.leaseId)).not.toContain(hold.leaseId);

    await lapseClaim(hold);
    expect((await sweepOf().due(500)).map((u) => u.leaseId)).toContain(hold.leaseId);
    const pass = await new Reconciler({ sweeps: [sweepOf()] }).pass();
    expect(pass.outcomes.lease_cleanup).toEqual({ discard_finished: 1 });

    const after = await leaseOf(hold);
    expect(after.status).toBe("destroyed");
    expect(after.cleanupClaimedBy).toBeNull();
    const receipt = (after.metadata as Record<string, unknown>).sandboxDestructionReceipt;
    expect(receipt).toMatchObject({ schema: DESTRUCTION_RECEIPT_SCHEMA, confirmed: true, requestId: intent.requestId, by: actor, reason: REASON, actionIds: [hold.actionId], pluginId: "builtin.local", providerLeaseId: hold.providerLeaseId });
    const action = await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: hold.actionId } });
    expect(action.status).not.toBe("resolved");
    expect((action.evidence as Record<string, unknown>).filesGivenUp).toMatchObject({ leaseId: hold.leaseId, reason: REASON, receipt: { requestId: intent.requestId } });
    const activity = await db.prisma().activityLog.findMany({ where: { entityId: hold.leaseId, action: "sandbox.discarded" } });
    expect(activity).toHaveLength(1);
    expect(activity[0]).toMatchObject({ actorType: "local_board", details: { requestId: intent.requestId, finishedBy: "reconciler" } });
    expect(await listed(hold)).toBeNull();
    // A second pass finds nothing.
    expect((await sweepOf().due(500)).map((u) => u.leaseId)).not.toContain(hold.leaseId);
  });

  it("R-RC-1: a repeat Discard is refused only while the request's claim is live (saying until when), then resumes the interrupted one: destroyed, recorded, naming the request it resumed", async () => {
    const hold = await createExportHold(db.prisma(), place, home);
    await interruptedAfterDestroy(hold);
    const first = intentOf(await leaseOf(hold))!;

    await expect(discardRetainedSandbox({ db: db.prisma(), registry: registry() }, request(hold))).rejects.toMatchObject({
      code: "cleanup_in_progress",
      details: { discardRequestId: first.requestId, claimedUntil: expect.any(String) },
    });
    await lapseClaim(hold);
    const result = await discardRetainedSandbox({ db: db.prisma(), registry: registry() }, request(hold));
    expect(result).toMatchObject({ leaseId: hold.leaseId, actionIds: [hold.actionId] });
    expect(result.receipt.requestId).not.toBe(first.requestId);
    const after = await leaseOf(hold);
    expect(after.status).toBe("destroyed");
    expect(intentOf(after)).toMatchObject({ requestId: result.receipt.requestId, resumes: first.requestId });
    expect(await db.prisma().activityLog.count({ where: { entityId: hold.leaseId, action: "sandbox.discarded" } })).toBe(1);
    expect(await listed(hold)).toBeNull();
  });

  it("R-RC-1: a repeat Discard racing the sweep's resume: exactly one destroys and records, the other gets a clear answer", async () => {
    const hold = await createExportHold(db.prisma(), place, home);
    await interruptedAfterDestroy(hold);
    await lapseClaim(hold);
    const counted = countingRegistry(registry(), { beforeDestroy: () => new Promise((resolve) => setTimeout(resolve, 150)) });
    const sweep = leaseCleanupSweep({ db: db.prisma(), registry: counted.registry, controller: { host: "test-host", pid: 4243 } });
    const [swept, repeated] = await Promise.allSettled([
      sweep.handle({ leaseId: hold.leaseId, companyId: place.companyId }),
      discardRetainedSandbox({ db: db.prisma(), registry: counted.registry }, request(hold)),
    ]);
    expect(counted.calls.destroy).toBe(1);
    const sweepWon = swept.status === "fulfilled" && swept.value === "discard_finished";
    if (sweepWon) expect(repeated).toMatchObject({ status: "rejected", reason: { code: "cleanup_in_progress" } });
    else {
      expect(repeated.status).toBe("fulfilled");
      expect(swept).toMatchObject({ status: "fulfilled", value: "claimed" });
    }
    expect((await leaseOf(hold)).status).toBe("destroyed");
    expect(await db.prisma().activityLog.count({ where: { entityId: hold.leaseId, action: "sandbox.discarded" } })).toBe(1);
  });
});

describe("two Discards at once", () => {
  it("R-RC-1: only one destroys and records; the other is refused cleanup_in_progress, nothing written twice", async () => {
    const hold = await createExportHold(db.prisma(), place, home);
    const counted = countingRegistry(registry(), { beforeDestroy: () => new Promise((resolve) => setTimeout(resolve, 150)) });
    const results = await Promise.allSettled([
      discardRetainedSandbox({ db: db.prisma(), registry: counted.registry }, request(hold)),
      discardRetainedSandbox({ db: db.prisma(), registry: counted.registry }, request(hold)),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(results.find((r) => r.status === "rejected")).toMatchObject({ reason: { code: "cleanup_in_progress" } });
    expect(counted.calls.destroy).toBe(1);
    expect((await leaseOf(hold)).status).toBe("destroyed");
    expect(await db.prisma().activityLog.count({ where: { entityId: hold.leaseId, action: "sandbox.discarded" } })).toBe(1);
  });
});

describe("a Discard interrupted before the destroy", () => {
  it("R-EX-6: the sweep's resume uses only the lease's pinned plugin: an unavailable one destroys nothing and defers without spending an attempt; the intent stays, listed as discarding with the failure", async () => {
    const hold = await createExportHold(db.prisma(), place, home);
    // The request's process died right after its intent was recorded.
    const flaky = flakyDb(db.prisma());
    const { registry: reg } = countingRegistry(registry(), { beforeDestroy: async () => {
      flaky.state.down = true;
      throw new Error("killed");
    } });
    await expect(discardRetainedSandbox({ db: flaky.client, registry: reg, sleep: async () => {} }, request(hold))).rejects.toThrow("killed");
    flaky.state.down = false;
    expect(existsSync(path.join(sandboxDir(hold), "workspace", "report.txt"))).toBe(true);
    await lapseClaim(hold);

    // Another plugin of the same provider is registered, the pinned one is not: it never serves the lease.
    const stranger = new ProviderRegistry();
    let strangerDestroys = 0;
    const local = createLocalProvider({ instanceRoot: home, isolation: "none" });
    stranger.register(Object.assign(Object.create(local) as typeof local, { pluginId: "acme.local", destroy: async () => void (strangerDestroys += 1) }));
    expect(await sweepOf(stranger).handle({ leaseId: hold.leaseId, companyId: place.companyId })).toBe("provider_plugin_unavailable");
    expect(strangerDestroys).toBe(0);
    const deferred = await leaseOf(hold);
    expect(deferred.status).toBe("released");
    expect(deferred.cleanupAttempts).toBe(0);
    expect(deferred.cleanupClaimedBy).toBeNull();
    expect(deferred.nextCleanupAt!.getTime()).toBeGreaterThan(Date.now() + 60_000);
    expect((deferred.metadata as Record<string, unknown>).failure).toMatchObject({ code: "provider_plugin_unavailable" });
    expect(intentOf(deferred)).toBeDefined();
    expect(existsSync(path.join(sandboxDir(hold), "workspace", "report.txt"))).toBe(true);
    expect((await listed(hold))?.discarding).toMatchObject({ lastFailure: { code: "provider_plugin_unavailable" } });
    // Deferred: not due again before its time.
    expect((await sweepOf().due(500)).map((u) => u.leaseId)).not.toContain(hold.leaseId);

    await db.prisma().$executeRaw`UPDATE environment_leases SET next_cleanup_at = now() - interval '1 second' WHERE id = ${hold.leaseId}::uuid`;
    expect(await sweepOf().handle({ leaseId: hold.leaseId, companyId: place.companyId })).toBe("discard_finished");
    expect(existsSync(sandboxDir(hold))).toBe(false);
    expect((await leaseOf(hold)).status).toBe("destroyed");
  });

  it("R-FO-5: the sweep never destroys for actions the operator did not acknowledge: a recovery action opened on the lease since the intent defers the resume, files kept, until a repeat Discard acknowledges it too", async () => {
    const hold = await createExportHold(db.prisma(), place, home);
    const flaky = flakyDb(db.prisma());
    const { registry: reg } = countingRegistry(registry(), { beforeDestroy: async () => {
      flaky.state.down = true;
      throw new Error("killed");
    } });
    await expect(discardRetainedSandbox({ db: flaky.client, registry: reg, sleep: async () => {} }, request(hold))).rejects.toThrow("killed");
    flaky.state.down = false;
    await lapseClaim(hold);
    const opened = await withTransaction(db.prisma(), (tx) =>
      openFileRecoveryAction(tx, { companyId: place.companyId, issueId: hold.issueId, runId: hold.runId, leaseId: hold.leaseId, providerLeaseId: hold.providerLeaseId, pluginId: "builtin.local", origin: "controller_lost", failureCode: "process_lost", agentProcess: null, agentStop: "not_recorded", pin: "already_pinned" }),
    );

    expect(await sweepOf().handle({ leaseId: hold.leaseId, companyId: place.companyId })).toBe("discard_unacknowledged_action");
    expect(existsSync(path.join(sandboxDir(hold), "workspace", "report.txt"))).toBe(true);
    const deferred = await leaseOf(hold);
    expect(deferred.status).toBe("released");
    expect((deferred.metadata as Record<string, unknown>).failure).toMatchObject({ code: "discard_unacknowledged_action" });

    await expect(discardRetainedSandbox({ db: db.prisma(), registry: registry() }, request(hold))).rejects.toMatchObject({ code: "acknowledgement_missing" });
    const result = await discardRetainedSandbox({ db: db.prisma(), registry: registry() }, request(hold, [hold.actionId, opened.actionId]));
    expect(result.actionIds.sort()).toEqual([hold.actionId, opened.actionId].sort());
    expect(existsSync(sandboxDir(hold))).toBe(false);
    expect((await leaseOf(hold)).status).toBe("destroyed");
  });
});

describe("the resumption's selection", () => {
  it("is bounded and read through its partial index (only leases with an unfinished discard)", async () => {
    await db.prisma().$executeRaw`ANALYZE environment_leases`;
    const plan = await db.prisma().$transaction(async (tx) => {
      await tx.$executeRaw`SET LOCAL enable_seqscan = off`;
      return tx.$queryRaw<{ "QUERY PLAN": string }[]>(Prisma.sql`EXPLAIN ${dueDiscardResumptionsSql(50)}`);
    });
    expect(plan.map((r) => r["QUERY PLAN"]).join("\n")).toContain("environment_leases_discard_due");
  });
});
