// Helpers of the recovery tests: real process identities (a live one: this test process; a dead
// one: a child that was started, recorded and killed), receipts written the way a crashed
// controller leaves them, and finalization deps whose controller is this real process (so the
// liveness probes of R-OWN-12 see real /proc entries).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import {
  openCopybackFailedAction,
  openExportLimitAction,
  openExportRetryExhaustedAction,
  openFileRecoveryAction,
  openLegacyCopybackRepairAction,
  openOwnerUnverifiedAction,
} from "../../src/records/actions";
import { COPYBACK_FAILED_CAUSE, EXPORT_LIMIT_CAUSE, EXPORT_RETRY_EXHAUSTED_CAUSE, FILE_RECOVERY_CAUSE, LEGACY_COPYBACK_REPAIR_CAUSE, OWNER_UNVERIFIED_CAUSE } from "../../src/records/causes";
import { FINALIZATION_OWNER_KEY, type FinalizationOwnerReceipt } from "../../src/records/finalization-owner-receipt";
import type { FinalizeRunDeps } from "../../src/finalization/finalize-run";
import type { ProcessIdentity } from "../../src/process/process-identity";
import { readProcessIdentity } from "../../src/process/read-process-identity";
import type { World } from "../finalization/finalization-fixture";

export async function selfIdentity(): Promise<ProcessIdentity> {
  const identity = await readProcessIdentity(process.pid);
  if (!identity) throw new Error("no /proc identity for the test process");
  return identity;
}

/** The identity of a process that existed and is gone now (its PID is free or reused). */
export async function deadIdentity(): Promise<ProcessIdentity> {
  const child = spawn("sleep", ["1000"], { stdio: "ignore" });
  await once(child, "spawn");
  const identity = await readProcessIdentity(child.pid as number);
  if (!identity) throw new Error("could not read the child's identity");
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
  return identity;
}

export function receiptOf(identity: ProcessIdentity, token = `tok-${Math.random().toString(36).slice(2)}-${Date.now()}`): FinalizationOwnerReceipt {
  return { token, host: identity.host, pid: identity.pid, processStart: identity.startTime, bootId: identity.bootId };
}

/** Leaves a receipt on the run as a controller that took ownership and crashed would. */
export async function leaveReceipt(db: PrismaClient, runId: string, receipt: FinalizationOwnerReceipt | Record<string, unknown>): Promise<void> {
  await db.$executeRaw`
    UPDATE heartbeat_runs
    SET runner_profile_json = runner_profile_json || jsonb_build_object(${FINALIZATION_OWNER_KEY}::text, ${JSON.stringify(receipt)}::jsonb)
    WHERE id = ${runId}::uuid`;
}

/** finalizeRun deps of the world with this real process as the controller. */
export async function liveDeps(world: World, extra: Partial<FinalizeRunDeps> = {}): Promise<FinalizeRunDeps> {
  return { ...world.deps(), controller: await selfIdentity(), ...extra };
}

/** A copy of the crash state: the coordinator mid-copyback, as a controller that died during export leaves it. */
export async function markFinalizing(db: PrismaClient, runId: string): Promise<void> {
  await db.nativeRunFinalization.update({ where: { runId }, data: { phase: "workspace_finalizing", attempt: 1 } });
  await db.$executeRaw`UPDATE heartbeat_runs SET native_phase = 'workspace_finalizing', result_json = COALESCE(result_json, '{}'::jsonb) || '{"finalizationPhase":"workspace_finalizing"}'::jsonb WHERE id = ${runId}::uuid`;
  await db.workspaceOperation.create({
    data: {
      companyId: (await db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).companyId,
      runId,
      issueId: (await db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).nativeIssueId,
      phase: "workspace_finalize",
      status: "running",
      metadata: { attempt: 1 },
    },
  });
}

/** The barrier a finished copyback leaves. */
export async function writeBarrier(db: PrismaClient, runId: string): Promise<void> {
  const run = await db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
  await db.workspaceOperation.updateMany({ where: { runId, phase: "workspace_finalize", status: "running" }, data: { status: "failed", errorCode: "controller_crashed", finishedAt: new Date() } });
  await db.workspaceOperation.create({
    data: { companyId: run.companyId, runId, issueId: run.nativeIssueId, phase: "workspace_finalize", status: "succeeded", metadata: { written: 0, deleted: 0, unchanged: true }, finishedAt: new Date() },
  });
}

/** The open recovery actions a task can carry (causes.ts), for tests that seed one of each. */
export const HOLD_CAUSES = [OWNER_UNVERIFIED_CAUSE, EXPORT_RETRY_EXHAUSTED_CAUSE, FILE_RECOVERY_CAUSE, LEGACY_COPYBACK_REPAIR_CAUSE, EXPORT_LIMIT_CAUSE, COPYBACK_FAILED_CAUSE] as const;
export type HoldCause = (typeof HOLD_CAUSES)[number];

/**
 * Opens a board-owned recovery action of `cause` on the run's task through its real writer
 * (actions.ts), naming the run and its lease; returns the action id.
 */
export async function seedHold(db: PrismaClient, cause: HoldCause, target: { companyId: string; issueId: string; runId: string; leaseId: string | null }): Promise<string> {
  const { companyId, issueId, runId, leaseId } = target;
  const lease = leaseId ? await db.environmentLease.findUniqueOrThrow({ where: { id: leaseId } }) : null;
  const allocation = { leaseId, providerLeaseId: lease?.providerLeaseId ?? null, pluginId: lease?.pluginId ?? null };
  const opened = await withTransaction(db, async (tx) => {
    switch (cause) {
      case OWNER_UNVERIFIED_CAUSE:
        return openOwnerUnverifiedAction(tx, {
          companyId, issueId, runId,
          receipt: receiptOf(await deadIdentity()),
          reason: "controller_exited_without_barrier", phase: "workspace_finalizing", resultId: null, leaseIds: leaseId ? [leaseId] : [],
        });
      case EXPORT_RETRY_EXHAUSTED_CAUSE:
        return openExportRetryExhaustedAction(tx, { companyId, issueId, runId, resultId: null, ...allocation, attempts: 3, lastFailureCode: "provider_export_failed" });
      case FILE_RECOVERY_CAUSE:
        return openFileRecoveryAction(tx, { companyId, issueId, runId, ...allocation, origin: "agent_exited", failureCode: "agent_exit_nonzero", agentProcess: null, agentStop: null, pin: "already_pinned" });
      case LEGACY_COPYBACK_REPAIR_CAUSE:
        return openLegacyCopybackRepairAction(tx, { companyId, issueId, runId, ...allocation, path: "copyback_failed", failureCode: "legacy_copyback_failed", hostWritesStarted: false });
      case EXPORT_LIMIT_CAUSE:
        return openExportLimitAction(tx, { companyId, issueId, runId, resultId: null, ...allocation, failureCode: "native_workspace_sync_out_limit_exceeded",
          limit: { kind: "limit", violation: "too_many_entries", limit: "maxEntries", max: 100_000, path: ".", violationCodes: ["too_many_entries"] },
        });
      case COPYBACK_FAILED_CAUSE:
        return openCopybackFailedAction(tx, { companyId, issueId, runId, resultId: null, ...allocation, failure: "merge_conflict", failureCode: "workspace_merge_conflict",
          hostWritesStarted: false, conflictCount: 1, conflicts: [{ path: "a.txt", kind: "both_changed" }], bindingReason: null, pin: "already_pinned",
        });
    }
  });
  return opened.actionId;
}
