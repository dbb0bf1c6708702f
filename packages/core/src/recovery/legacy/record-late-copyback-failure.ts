// R-LG-1..3: a legacy adapter's copy-back failure reported AFTER cancellation already stopped and
// released its sandbox lease. Under the run's and the lease's row locks, the pure policy
// (decideLateLegacyReport) compares the lease with the snapshot the run recorded before dispatch;
// only a full match, with the stop-and-retain receipt and the stopped-execution receipt, admits.
// Then, in the same transaction, the allocation is excluded from reuse (retain_on_failure and the
// retained-source record; release status and receipts stay as they are) and the board's repair
// hold opens. The cancelled run keeps its status, no newer run and no task status is touched, and
// nothing is replayed. Any mismatch writes nothing (fails closed); the snapshot names its own
// lease, so no other released lease is ever adopted (R-LG-2). The record is control-plane
// evidence only (R-LG-3): it proves nothing about the bytes the provider still holds.
import { realpath } from "node:fs/promises";
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { retainLeaseOnFailure } from "../../leases/retained-source";
import { recordRunEvent } from "../../records/run-log";
import { OPEN_RECOVERY_ACTION_STATUSES, openLegacyCopybackRepairAction } from "../../records/actions";
import { LEGACY_COPYBACK_REPAIR_CAUSE } from "../../records/causes";
import { decideLateLegacyReport, type LateLegacyRejectCode, type SnapshotField } from "../policies/decide-late-legacy-report";
import { readLegacyLeaseSnapshot } from "./lease-snapshot";

export interface LateLegacyReportInput {
  companyId: string;
  runId: string;
  code: string;
  message: string;
}

export type LateLegacyReportOutcome =
  | { kind: "held"; actionId: string; leaseId: string }
  | { kind: "already_recorded" }
  | { kind: "rejected"; code: LateLegacyRejectCode; message: string; field?: SnapshotField };

export async function recordLateLegacyCopybackFailure(db: PrismaClient, input: LateLegacyReportInput): Promise<LateLegacyReportOutcome> {
  return withTransaction(db, async (tx): Promise<LateLegacyReportOutcome> => {
    await tx.$queryRaw`SELECT id FROM heartbeat_runs WHERE id = ${input.runId}::uuid AND company_id = ${input.companyId}::uuid FOR UPDATE`;
    const run = await tx.heartbeatRun.findFirst({
      where: { id: input.runId, companyId: input.companyId },
      select: { id: true, companyId: true, nativeIssueId: true, status: true, runtimeMode: true, runnerProfileJson: true },
    });
    const snapshot = readLegacyLeaseSnapshot(run?.runnerProfileJson ?? null);
    // The lease is looked up ONLY by the snapshot's own id, in the reporting company.
    const leaseId = snapshot.kind === "present" ? snapshot.snapshot.leaseId : null;
    if (leaseId) await tx.$queryRaw`SELECT id FROM environment_leases WHERE id = ${leaseId}::uuid AND company_id = ${input.companyId}::uuid FOR UPDATE`;
    const lease = leaseId
      ? await tx.environmentLease.findFirst({ where: { id: leaseId, companyId: input.companyId }, include: { executionWorkspace: { select: { hostPath: true } } } })
      : null;
    const currentRealizedRoot = lease?.executionWorkspace ? await realpath(lease.executionWorkspace.hostPath).catch(() => null) : null;
    const competing =
      lease?.providerLeaseId != null
        ? await tx.environmentLease.count({
            where: { id: { not: lease.id }, pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId, status: { in: ["active", "pending_cleanup"] } },
          })
        : 0;
    const recorded = run
      ? await tx.issueRecoveryAction.count({ where: { companyId: input.companyId, runId: run.id, cause: LEGACY_COPYBACK_REPAIR_CAUSE, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] } } })
      : 0;
    const decision = decideLateLegacyReport({
      report: { companyId: input.companyId, runId: input.runId },
      run: run ? { id: run.id, companyId: run.companyId, issueId: run.nativeIssueId, status: run.status, runtimeMode: run.runtimeMode, runnerProfile: run.runnerProfileJson } : null,
      snapshot,
      lease,
      currentRealizedRoot,
      competingOwner: competing > 0,
      alreadyRecorded: recorded > 0,
    });
    if (decision.kind === "reject") return { kind: "rejected", code: decision.code, message: decision.message, ...(decision.field ? { field: decision.field } : {}) };
    if (decision.kind === "already_recorded") return { kind: "already_recorded" };
    const snap = decision.snapshot;
    const retained = await retainLeaseOnFailure(tx, { leaseId: snap.leaseId, expectRunId: snap.runId, reason: "legacy_late_copyback_failure" });
    if (retained.kind !== "retained") return { kind: "rejected", code: "lease_changed", message: `The lease could not be retained (${retained.status}).` };
    const action = await openLegacyCopybackRepairAction(tx, {
      companyId: snap.companyId,
      issueId: snap.issueId,
      runId: snap.runId,
      leaseId: snap.leaseId,
      providerLeaseId: snap.providerLeaseId,
      pluginId: snap.pluginId,
      path: "late_report",
      failureCode: input.code,
      hostWritesStarted: false,
    });
    await recordRunEvent(tx, {
      companyId: snap.companyId,
      runId: snap.runId,
      level: "error",
      code: "legacy.late_copyback_held",
      message: "The legacy adapter reported a failed copy-back after the run was cancelled; its stopped sandbox is kept for repair and excluded from reuse.",
      payload: { actionId: action.actionId, leaseId: snap.leaseId, errorCode: input.code, detail: input.message },
    });
    return { kind: "held", actionId: action.actionId, leaseId: snap.leaseId };
  });
}
