// sandboxes.listRetained: the retained sandboxes page's data, for runtime
// managers only, company-scoped, with why each allocation is kept; sandboxes.discard through the
// same core service as the CLI, on a real stopped local sandbox.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { existsSync } from "node:fs";
import path from "node:path";
import { createExportHold } from "./export-hold-fixture";
import { buildAuthWorld, callerFor, configureWebApp, disconnectWebApp, sessionPrincipal, type AuthWorld } from "./auth-fixture";

const testDb = useTestDatabase();
let world: AuthWorld;

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  world = await buildAuthWorld(testDb.prisma());
});
afterAll(disconnectWebApp);

describe("sandboxes.listRetained", () => {
  it("a runtime manager sees the company's retained lease with its open action and its failed run as the reasons; another company's is not there", async () => {
    const manager = callerFor(testDb.prisma(), sessionPrincipal(world.users.manager.id, [{ companyId: world.companyA.id, role: "runtime_manager" }]));
    const { total, items } = await manager.sandboxes.listRetained({ companyId: world.companyA.id });
    expect(total).toBe(1);
    expect(items[0]).toMatchObject({ leaseId: world.a.lease.id, runId: world.a.run.id, provider: "fake", pluginId: "builtin.fake", issue: { id: world.a.issue.id } });
    const kinds = items[0]!.reasons.map((r) => r.kind);
    expect(kinds).toEqual(["recovery_action", "run_not_committed"]);
    expect(items[0]!.reasons[0]).toMatchObject({ actionId: world.a.olderHold.id, cause: "legacy_workspace_copyback_failed" });
    expect(items.some((i) => i.leaseId === world.b.lease.id)).toBe(false);
    // No size was measured for it: unknown.
    expect(items[0]).toMatchObject({ sizeBytes: null, size: null });
  });

  it("carries the size measured after the sandbox's stop, bound to its stop receipt", async () => {
    const prisma = testDb.prisma();
    const requestId = "8c1f2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b";
    const providerLeaseId = `fake-${world.a.lease.id}`;
    await prisma.environmentLease.update({
      where: { id: world.a.lease.id },
      data: {
        providerLeaseId,
        metadata: {
          sandboxStopAndRetainReceipt: { schema: "copyback.sandbox-stop-and-retain-receipt.v1", method: "builtin.stopLease", requestId, pluginId: "builtin.fake", providerLeaseId, stoppedAt: "2026-12-01T10:00:00.000Z" },
          sandboxSize: {
            schema: "copyback.sandbox-size.v1", pluginId: "builtin.fake", providerLeaseId, stopRequestId: requestId,
            workspaceBytes: 4_200, workspaceEntries: 3, sandboxBytes: 5_000, sandboxEntries: 4, lowerBound: "entry_budget",
            measuredAt: "2026-12-01T10:00:01.000Z", durationMs: 2,
          },
        },
      },
    });
    try {
      const manager = callerFor(prisma, sessionPrincipal(world.users.manager.id, [{ companyId: world.companyA.id, role: "runtime_manager" }]));
      const { items } = await manager.sandboxes.listRetained({ companyId: world.companyA.id });
      expect(items[0]).toMatchObject({
        sizeBytes: 5_000,
        size: { bytes: 5_000, entries: 4, workspaceBytes: 4_200, workspaceEntries: 3, lowerBound: "entry_budget", measuredAt: new Date("2026-12-01T10:00:01.000Z") },
      });
    } finally {
      await prisma.environmentLease.update({ where: { id: world.a.lease.id }, data: { providerLeaseId: null, metadata: {} } });
    }
  });

  it("a plain member is refused (runtime:manage), and a company the user is not in reads as not found", async () => {
    const member = callerFor(testDb.prisma(), sessionPrincipal(world.users.member.id, [{ companyId: world.companyA.id, role: "member" }]));
    await expect(member.sandboxes.listRetained({ companyId: world.companyA.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    const manager = callerFor(testDb.prisma(), sessionPrincipal(world.users.manager.id, [{ companyId: world.companyA.id, role: "runtime_manager" }]));
    await expect(manager.sandboxes.listRetained({ companyId: world.companyB.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("sandboxes.discard", () => {
  it("a runtime manager discards a real retained local sandbox after a refused attempt that named a wrong allocation; a member may not", async () => {
    const prisma = testDb.prisma();
    const environment = await prisma.environment.create({ data: { companyId: world.companyA.id, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment" } });
    const hold = await createExportHold(prisma, { companyId: world.companyA.id, agentId: world.a.agent.id, environmentId: environment.id });
    const input = { companyId: world.companyA.id, leaseId: hold.leaseId, providerLeaseId: hold.providerLeaseId, acknowledgedActionIds: [hold.actionId], reason: "Copied by hand." };
    const member = callerFor(prisma, sessionPrincipal(world.users.member.id, [{ companyId: world.companyA.id, role: "member" }]));
    await expect(member.sandboxes.discard(input)).rejects.toMatchObject({ code: "FORBIDDEN" });
    const manager = callerFor(prisma, sessionPrincipal(world.users.manager.id, [{ companyId: world.companyA.id, role: "runtime_manager" }]));
    await expect(manager.sandboxes.discard({ ...input, providerLeaseId: "some-other-sandbox" })).rejects.toMatchObject({ code: "CONFLICT" });
    expect(existsSync(path.join(hold.instanceRoot, "sandboxes", hold.providerLeaseId))).toBe(true);
    const done = await manager.sandboxes.discard(input);
    expect(done).toMatchObject({ leaseId: hold.leaseId, providerLeaseId: hold.providerLeaseId, actionIds: [hold.actionId] });
    expect(existsSync(path.join(hold.instanceRoot, "sandboxes", hold.providerLeaseId))).toBe(false);
    const activity = await prisma.activityLog.findFirstOrThrow({ where: { entityId: hold.leaseId, action: "sandbox.discarded" } });
    expect(activity).toMatchObject({ actorType: "user", actorId: world.users.manager.id });
  });
});
