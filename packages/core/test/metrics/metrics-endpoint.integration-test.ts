// The metrics endpoint of @copyback/core after real finalizations on a real PostgreSQL:
// a committed copyback moves the runs gauge and the merge, lock and operation
// histograms; a live recorded owner is a busy skip (R-OWN-2) counted by reason; a dead owner
// without a barrier opens a board hold that the open-actions gauge shows by cause and age; a
// database that does not answer makes copyback_database_up 0 and leaves its gauges out.
import { rm } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { createPrismaClient } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { createMetricsEndpoint } from "../../src/monitoring/endpoint";
import { parseExposition, sampleSum, type Sample } from "../../src/metrics/exposition";
import { OWNER_UNVERIFIED_CAUSE } from "../../src/records/causes";
import { preparedRun, writeTree, type World, useWorld } from "../finalization/finalization-fixture";
import { createExportHold, exportHoldInstanceRoot } from "../support/export-hold";
import { deadIdentity, leaveReceipt, liveDeps, markFinalizing, receiptOf, selfIdentity } from "../recovery/recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

async function scrape(): Promise<Sample[]> {
  // A fresh endpoint per scrape: the database gauges are read again, never from a cached snapshot.
  return parseExposition(await createMetricsEndpoint({ db: db.prisma() }).render());
}

describe("metrics after real finalizations", () => {
  it("a committed copyback moves the runs gauge and the merge, lock and workspace operation histograms", async () => {
    const before = await scrape();
    expect(sampleSum(before, "copyback_database_up")).toBe(1);
    const run = await preparedRun(world);
    await writeTree(run.sandbox, { "src/metrics.txt": "x".repeat(5000) });
    expect(await finalizeRun(world.deps(), { runId: run.runId })).toMatchObject({ kind: "committed" });
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sampleSum(after, name, labels) - sampleSum(before, name, labels);
    expect(delta("copyback_runs", { status: "succeeded", phase: "committed" })).toBe(1);
    expect(delta("copyback_merge_duration_seconds_count", { outcome: "applied" })).toBe(1);
    expect(delta("copyback_merge_written_bytes_sum")).toBeGreaterThanOrEqual(5000);
    expect(delta("copyback_directory_merge_lock_wait_seconds_count", { outcome: "acquired" })).toBeGreaterThanOrEqual(1);
    expect(delta("copyback_workspace_operation_duration_seconds_count", { phase: "workspace_finalize", status: "succeeded" })).toBe(1);
  });

  it("R-OWN-2 a run whose recorded owner lives is skipped busy, and the skip is counted by reason", async () => {
    const before = await scrape();
    const run = await preparedRun(world);
    await markFinalizing(db.prisma(), run.runId);
    await leaveReceipt(db.prisma(), run.runId, receiptOf(await selfIdentity()));
    expect(await finalizeRun(await liveDeps(world), { runId: run.runId })).toEqual({ kind: "busy", reason: "owner_alive" });
    const after = await scrape();
    expect(sampleSum(after, "copyback_finalization_busy_skips_total", { reason: "owner_alive" }) - sampleSum(before, "copyback_finalization_busy_skips_total", { reason: "owner_alive" })).toBe(1);
  });

  it("an unverified owner's hold shows in the open recovery actions by cause and age", async () => {
    const before = await scrape();
    const run = await preparedRun(world);
    await markFinalizing(db.prisma(), run.runId);
    await leaveReceipt(db.prisma(), run.runId, receiptOf(await deadIdentity()));
    expect(await finalizeRun(await liveDeps(world), { runId: run.runId })).toMatchObject({ kind: "owner_unverified" });
    const after = await scrape();
    const labels = { cause: OWNER_UNVERIFIED_CAUSE, age: "lt_1h" };
    expect(sampleSum(after, "copyback_recovery_actions_open", labels) - sampleSum(before, "copyback_recovery_actions_open", labels)).toBe(1);
    expect(sampleSum(after, "copyback_recovery_action_oldest_open_seconds", { cause: OWNER_UNVERIFIED_CAUSE })).toBeLessThan(3600);
    // Resolved actions are not open: resolving it takes it out of the gauge.
    await db.prisma().issueRecoveryAction.updateMany({ where: { runId: run.runId }, data: { status: "resolved", resolvedAt: new Date() } });
    expect(sampleSum(await scrape(), "copyback_recovery_actions_open", labels)).toBe(sampleSum(before, "copyback_recovery_actions_open", labels));
  });

  it("a retained sandbox (an export-retry hold's stopped local sandbox) shows in copyback_retained_sandboxes by provider", async () => {
    const prisma = db.prisma();
    const before = await scrape();
    const environment = await prisma.environment.create({ data: { companyId: world.companyId, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment" } });
    const home = await exportHoldInstanceRoot();
    try {
      await createExportHold(prisma, { companyId: world.companyId, agentId: world.agentId, environmentId: environment.id }, home);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
    const after = await scrape();
    expect(sampleSum(after, "copyback_retained_sandboxes", { provider: "local" }) - sampleSum(before, "copyback_retained_sandboxes", { provider: "local" })).toBe(1);
  });

  it("a database that does not answer reads copyback_database_up 0 and reports no database gauge", async () => {
    const url = new URL(db.url());
    url.port = "1"; // nothing listens there
    const unreachable = createPrismaClient({ databaseUrl: url.toString(), poolSize: 1, applicationName: "copyback-metrics-test" });
    try {
      const samples = parseExposition(await createMetricsEndpoint({ db: unreachable }).render());
      expect(sampleSum(samples, "copyback_database_up")).toBe(0);
      expect(samples.filter((s) => s.name === "copyback_runs")).toEqual([]);
      // The process metrics are still there.
      expect(sampleSum(samples, "process_resident_memory_bytes")).toBeGreaterThan(0);
    } finally {
      await unreachable.$disconnect();
    }
  });
});
