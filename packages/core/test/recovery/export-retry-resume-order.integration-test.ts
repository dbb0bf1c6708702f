// R-EX-5, first clause, on a real PostgreSQL and the real local provider: before the retained
// sandbox is resumed, the controller has DURABLY recorded a stop-only cleanup intent on that exact
// lease and removed the old stopped receipt. The provider's resume reads the lease row as another
// process would at that instant (through the pool, outside the retry's transaction). A crash
// during the resume therefore leaves a pending stop-only intent for the cleanup sweep, never a
// stale receipt that could admit a second retry or release the sandbox for reuse.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { DomainError } from "../../src/errors";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { leaseOutcomeAfterFinalize } from "../../src/finalization/finalize-outcome-policy";
import { readStopIntent, readStopReceipt } from "../../src/leases/lease-metadata";
import { releaseLeaseByPolicy } from "../../src/leases/release-lease";
import { createLocalProvider } from "../../src/providers/local/index";
import type { EnvironmentProvider } from "../../src/providers/types";
import { EXPORT_RETRY_EXHAUSTED_CAUSE } from "../../src/records/causes";
import { retryWorkspaceExport } from "../../src/recovery/operator/retry-workspace-export";
import { DispatchWorld, RESULT_DONE, submitResult } from "../dispatch/dispatch-fixture";

const database = useTestDatabase({ poolSize: 8 });
const world = new DispatchWorld(database);
const PLUGIN = "test.local-resume-order";
let exportFailures = 0;
/** The lease row as the pool saw it when the provider was asked to resume. */
const seenAtResume: unknown[] = [];

beforeAll(async () => {
  await world.setUp();
  const base = createLocalProvider({ instanceRoot: world.instanceRoot, pluginId: PLUGIN, isolation: "none", killGraceMs: 500 });
  const plugin: EnvironmentProvider = {
    ...base,
    async exportWorkspace(lease, options) {
      if (exportFailures > 0) {
        exportFailures -= 1;
        throw new DomainError("unavailable", "provider_export_failed", "The sandbox's export transport did not answer.");
      }
      return base.exportWorkspace!(lease, options);
    },
    // The delta export is an export too: the same transport fault fails it.
    async exportDelta(lease, request) {
      if (exportFailures > 0) {
        exportFailures -= 1;
        throw new DomainError("unavailable", "provider_export_failed", "The sandbox's export transport did not answer.");
      }
      return base.exportDelta!(lease, request);
    },
    async resume(lease, expected) {
      seenAtResume.push(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.leaseId } }));
      return base.resume!(lease, expected);
    },
  };
  world.registry.register(plugin);
});
afterAll(() => world.tearDown());

describe("the export-only retry's resume order", () => {
  it("R-EX-5 before resuming, the stop-only intent is durable on the exact lease and the old stopped receipt is gone", async () => {
    const task = await world.task({ provider: "local", pluginId: PLUGIN, policy: "reuse_by_environment", files: { "a.txt": "host\n" }, script: `printf 'edit\\n' > a.txt && ${submitResult(RESULT_DONE)}` });
    exportFailures = 1_000;
    const runId = await world.runOnce(task);
    for (let i = 0; i < 3; i += 1) {
      const coordinator = await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } });
      if (coordinator.phase !== "retryable_failure") break;
      const at = new Date((coordinator.nextAttemptAt ?? new Date()).getTime() + 1);
      const outcome = await finalizeRun({ ...world.deps(), now: () => at }, { runId });
      const release = leaseOutcomeAfterFinalize(outcome);
      const [lease] = await world.db.environmentLease.findMany({ where: { runId } });
      if (release && lease) await releaseLeaseByPolicy(world.db, world.registry, { leaseId: lease.id, runId, outcome: release });
    }
    exportFailures = 0;
    const held = await world.db.environmentLease.findFirstOrThrow({ where: { runId } });
    expect(held.status).toBe("released");
    const oldReceipt = readStopReceipt(held.metadata);
    expect(oldReceipt.kind).toBe("present");
    const action = await world.db.issueRecoveryAction.findFirstOrThrow({ where: { runId, cause: EXPORT_RETRY_EXHAUSTED_CAUSE, status: "active" } });

    const result = await retryWorkspaceExport(
      { db: world.db, registry: world.registry, finalize: world.deps() },
      { companyId: task.companyId, issueId: task.issueId, actionId: action.id, runId, repairNote: "Transport restored; files untouched.", actor: { type: "user", id: null } },
    );
    expect(result).toMatchObject({ status: "readmitted" });

    expect(seenAtResume).toHaveLength(1);
    const atResume = seenAtResume[0] as typeof held;
    expect(atResume.id).toBe(held.id);
    expect(atResume.status).toBe("pending_cleanup");
    expect(readStopReceipt(atResume.metadata).kind).toBe("absent");
    expect(readStopIntent(atResume.metadata, atResume)).toMatchObject({ kind: "present", value: { leaseId: held.id, runId, providerLeaseId: held.providerLeaseId, pluginId: PLUGIN } });
    // And after the commit the lease carries a new receipt, not the old one.
    const after = await world.db.environmentLease.findUniqueOrThrow({ where: { id: held.id } });
    const newReceipt = readStopReceipt(after.metadata);
    expect(newReceipt.kind === "present" && oldReceipt.kind === "present" && newReceipt.value.requestId !== oldReceipt.value.requestId).toBe(true);
  });
});
