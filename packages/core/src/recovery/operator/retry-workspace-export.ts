// The export-only retry (R-EX-2, R-EX-3, R-EX-5, R-DT-2): the one service behind
//   POST /api/issues/:id/recovery-actions/retry-workspace-export (REST),
//   recovery.retryWorkspaceExport (tRPC) and `copyback recovery retry-export` (CLI).
// The caller has checked `runtime:manage`. In order:
//   1. the exact sandbox is inspected through the lease's pinned plugin (R-EX-6), before any lock;
//   2. ONE transaction takes the run's finalization advisory lock (the finalizer's, so it shares
//      finalization ownership), loads the snapshot under row locks and asks decideExportRetry.
//      A refusal writes nothing (the transaction rolls back); a duplicate answers the same and
//      writes nothing. On admission: a stop-only intent on that exact lease with the old stopped
//      receipt removed (released -> pending_cleanup, R-EX-5) under this retry's 15-minute cleanup
//      claim, and the request with its repair note on the hold;
//   3. the verified lifecycle, outside any transaction: the in-sandbox sentinel is read while the
//      sandbox is still stopped and compared with the lease's (R-DT-2), the plugin's resume drains
//      old activity, verifies the workspace identity and only then reopens admission; then the
//      sandbox is probed again (inspect and sentinel). A lost resume reply, a failed probe or a
//      changed admission stops and retains the sandbox again by that same intent and answers an
//      error; nothing is re-admitted;
//   4. ONE transaction re-admits under the lock: decideExportRetry again ("readmit"), the
//      coordinator back to result_accepted (the readmission edge, exhausted code only), the run
//      back to running, its claim's status_version re-recorded to the task's current version (the
//      failure blocked the task and bumped it), and the hold marks the retry re-admitted.
// The ordinary finalization (passed in `finalize`, or the reconciler's finalization sweep) then
// commits the same run with its saved result; the hold resolves in that commit; no provider turn
// and no wake. The lease keeps the stop-only intent until the release after the commit: a
// reusable sandbox is stopped and retained again, an ephemeral one destroyed only after the
// commit with the host-copy barrier (release-lease.ts).
// The parts, each in its own file: the probe of step 1 (leases/sandbox-probe.ts), the snapshot of steps 2
// and 4 (export-retry-snapshot.ts), the verified resume of step 3 (leases/resume-sandbox.ts), the stop
// again of a failed step 3 or 4 (stop-again.ts), the reopened run (reopen-run.ts) and the retry's
// cleanup claim (export-retry-claim.ts).
import { randomUUID } from "node:crypto";
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { z } from "zod";
import { boundElsewhere } from "../../deployment/host-id";
import { DomainError, isDomainError, messageOf, notFound } from "../../errors";
import { finalizeRun, type FinalizeOutcome, type FinalizeRunDeps } from "../../finalization/finalize-run";
import { leaseOutcomeAfterFinalize } from "../../finalization/finalize-outcome-policy";
import { LEASE_METADATA_KEYS, readStopIntent } from "../../leases/lease-metadata";
import type { LeaseProviderRegistry, LeaseReleaseOutcome, LeaseRow } from "../../leases/lease-types";
import { pluginForLease } from "../../leases/plugin-for-lease";
import { releaseLeaseByPolicy } from "../../leases/release-lease";
import { resumeVerified } from "../../leases/resume-sandbox";
import { probeSandbox } from "../../leases/sandbox-probe";
import { recordExportRetryIntent } from "../../leases/stop-intent";
import { readExportRetry, recordExportRetryRequested, recordExportRetryState } from "../../records/actions-export-retry";
import { readmitFinalization } from "../../records/coordinator";
import { recordActivity, type Actor } from "../../records/record-activity";
import { recordRunEvent } from "../../records/run-log";
import { decideExportRetry } from "../policies/decide-export-retry";
import { foreignRunsSql } from "../sweeps/host-bound-sweep";
import { exportRetryClaimOf, giveBackClaimAtReadmission } from "./export-retry-claim";
import { loadExportRetrySnapshot } from "./export-retry-snapshot";
import { reopenRun } from "./reopen-run";
import { stopAgain } from "./stop-again";

/** R-EX-2: the body of the request, shared by the REST route, the tRPC procedure and the CLI. */
export const retryWorkspaceExportBody = z.strictObject({
  actionId: z.uuid(),
  runId: z.uuid(),
  repairNote: z.string().trim().min(1).max(20_000),
});
export type RetryWorkspaceExportBody = z.infer<typeof retryWorkspaceExportBody>;

export interface RetryWorkspaceExportInput extends RetryWorkspaceExportBody {
  companyId: string;
  issueId: string;
  actor: Actor;
}

export interface RetryWorkspaceExportDeps {
  db: PrismaClient;
  /** The provider plugins of this process; the lease's recorded plugin must be among them (R-EX-6). */
  registry: LeaseProviderRegistry;
  /**
   * When given, the re-admitted run is finalized here at once (the same finalizeRun as the live
   * path and the sweep) and its lease released by policy; otherwise the reconciler's
   * finalization sweep does it.
   */
  finalize?: FinalizeRunDeps;
  /**
   * This process's host id (deployment/host-id.ts). Issue 23: the retry reads the retained sandbox
   * and copies into the run's host workspace, so a local sandbox or a workspace of another host is
   * refused (export_retry_on_other_host) before any provider call or write.
   */
  hostId?: string;
}

export interface RetryWorkspaceExportResult {
  actionId: string;
  runId: string;
  leaseId: string;
  requestId: string;
  /** readmitted: this call re-admitted the run; already_requested: a duplicate (nothing written). */
  status: "readmitted" | "already_requested";
  /** The duplicate's state: still resuming elsewhere, or already re-admitted. */
  retryState: "resuming" | "readmitted";
  /** The finalization this call ran (with `finalize` only). */
  finalization: { outcome: FinalizeOutcome["kind"]; lease: LeaseReleaseOutcome["kind"] | null } | null;
}

export { exportRetryClaimOf } from "./export-retry-claim";

export async function retryWorkspaceExport(deps: RetryWorkspaceExportDeps, rawInput: RetryWorkspaceExportInput): Promise<RetryWorkspaceExportResult> {
  const body = retryWorkspaceExportBody.safeParse({ actionId: rawInput.actionId, runId: rawInput.runId, repairNote: rawInput.repairNote });
  if (!body.success) throw new DomainError("invalid", "invalid_request", `The export-only retry request is invalid: ${z.prettifyError(body.error)}`);
  const input = { ...rawInput, ...body.data };
  const { db } = deps;

  // 1. The probe of the exact sandbox, before any lock (provider I/O never runs under row locks).
  const action = await db.issueRecoveryAction.findFirst({
    where: { id: input.actionId, companyId: input.companyId, issueId: input.issueId },
    select: { id: true, leaseId: true, evidence: true },
  });
  if (!action) throw notFound("The recovery action");
  const leaseRow = action.leaseId ? await db.environmentLease.findFirst({ where: { id: action.leaseId, companyId: input.companyId } }) : null;
  if (deps.hostId !== undefined) await refuseOtherHost(db, deps.hostId, leaseRow, input.runId);
  const plugin = leaseRow ? pluginForLease(deps.registry, leaseRow) : null;
  // A request the policy will answer as a duplicate (in flight, or re-admitted and not held again)
  // needs no provider call; a run held again after its re-admission is probed like a first one.
  const duplicate = readExportRetry(action.evidence);
  const phase = (await db.nativeRunFinalization.findUnique({ where: { runId: input.runId }, select: { phase: true } }))?.phase;
  const inFlight =
    duplicate?.state === "resuming" && leaseRow?.status === "pending_cleanup" && (() => {
      const intent = readStopIntent(leaseRow.metadata, leaseRow);
      return intent.kind === "present" && intent.value.requestId === duplicate.requestId;
    })();
  const answeredAsDuplicate = inFlight || (duplicate?.state === "readmitted" && phase !== "terminal_failure");
  const sandbox =
    leaseRow && plugin?.kind === "found" && !answeredAsDuplicate ? await probeSandbox(plugin.plugin, leaseRow) : ({ kind: "not_probed" } as const);

  // 2. Admission: nothing is written unless it admits.
  const admitted = await withTransaction(db, async (tx) => {
    const snapshot = await loadExportRetrySnapshot(tx, deps.registry, input, "admit", sandbox);
    const decision = decideExportRetry(snapshot.policy);
    if (decision.kind === "reject") throw refusal(decision.code, decision.status, decision.message, input);
    if (decision.kind === "already_requested") {
      return { kind: "duplicate" as const, requestId: decision.requestId, state: decision.state, leaseId: snapshot.lease?.id ?? "" };
    }
    const lease = snapshot.lease as LeaseRow;
    const requestId = randomUUID();
    // R-EX-5: the stop-only intent on that exact lease, and the old stopped receipt removed, BEFORE the resume.
    const intent = await recordExportRetryIntent(tx, { lease, providerLeaseId: lease.providerLeaseId as string, requestId, claim: exportRetryClaimOf(input.actionId) });
    if (!intent) throw refusal("lease_changed", 409, "The lease changed during the admission.", input);
    await recordExportRetryRequested(tx, { actionId: input.actionId, requestId, repairNote: input.repairNote, actor: input.actor });
    await recordActivity(tx, {
      companyId: input.companyId,
      actor: input.actor,
      action: "recovery.export_retry_requested",
      entityType: "issue_recovery_action",
      entityId: input.actionId,
      details: { issueId: input.issueId, runId: input.runId, leaseId: lease.id, requestId, repairNote: input.repairNote },
    });
    await recordRunEvent(tx, {
      companyId: input.companyId,
      runId: input.runId,
      level: "info",
      code: "workspace.export_retry_requested",
      message: "An operator requested the export-only retry; the retained sandbox is resumed and verified before the same run copies its saved result.",
      payload: { actionId: input.actionId, leaseId: lease.id, requestId },
    });
    return { kind: "admitted" as const, requestId, lease: { ...lease, metadata: { ...(lease.metadata as object), [LEASE_METADATA_KEYS.stopIntent]: intent } } };
  });
  if (admitted.kind === "duplicate") {
    return { actionId: input.actionId, runId: input.runId, leaseId: admitted.leaseId, requestId: admitted.requestId, status: "already_requested", retryState: admitted.state, finalization: null };
  }

  // 3. The verified lifecycle of the recorded lease.
  const lease = admitted.lease as LeaseRow;
  const lifecycle = await resumeVerified(deps.registry, lease);
  if (lifecycle.kind === "failed") {
    await stopAgain(deps, input, admitted.requestId, lease.id, lifecycle.code, lifecycle.message);
    throw new DomainError(lifecycle.status === 503 ? "unavailable" : "conflict", lifecycle.code, lifecycle.message, {
      actionId: input.actionId,
      runId: input.runId,
      leaseId: lease.id,
    });
  }

  // 4. Re-admission under finalization ownership.
  try {
    await withTransaction(db, async (tx) => {
      const snapshot = await loadExportRetrySnapshot(tx, deps.registry, input, "readmit", lifecycle.inspection, admitted.requestId);
      const decision = decideExportRetry(snapshot.policy);
      if (decision.kind !== "admit") {
        throw refusal(decision.kind === "reject" ? decision.code : "retry_intent_changed", 409, decision.kind === "reject" ? decision.message : "The retry changed during the resume.", input);
      }
      const readmitted = await readmitFinalization(tx, {
        runId: input.runId,
        resultId: decision.resultId,
        readmission: { by: "export_retry", actionId: input.actionId, requestId: admitted.requestId, at: new Date().toISOString() },
      });
      if (!readmitted) throw refusal("phase_not_resumable", 409, "The coordinator left terminal_failure during the retry.", input);
      await reopenRun(tx, input.runId, snapshot.issueStatusVersion);
      await giveBackClaimAtReadmission(tx, { leaseId: lease.id, actionId: input.actionId });
      await recordExportRetryState(tx, { actionId: input.actionId, requestId: admitted.requestId, state: "readmitted" });
      await recordActivity(tx, {
        companyId: input.companyId,
        actor: input.actor,
        action: "recovery.export_retry_readmitted",
        entityType: "issue_recovery_action",
        entityId: input.actionId,
        details: { issueId: input.issueId, runId: input.runId, leaseId: lease.id, requestId: admitted.requestId },
      });
      await recordRunEvent(tx, {
        companyId: input.companyId,
        runId: input.runId,
        level: "info",
        code: "workspace.export_retry_readmitted",
        message: "The retained sandbox was resumed and verified (workspace identity and sentinel); the same run copies its saved result again. No agent turn is started.",
        payload: { actionId: input.actionId, leaseId: lease.id, requestId: admitted.requestId },
      });
    });
  } catch (error) {
    // A changed admission: the sandbox is stopped and retained again, nothing is re-admitted.
    const code = isDomainError(error) ? error.code : "export_retry_readmission_failed";
    await stopAgain(deps, input, admitted.requestId, lease.id, code, messageOf(error));
    throw error;
  }

  let finalization: RetryWorkspaceExportResult["finalization"] = null;
  if (deps.finalize) {
    const outcome = await finalizeRun(deps.finalize, { runId: input.runId });
    const leaseOutcome = leaseOutcomeAfterFinalize(outcome);
    const released = leaseOutcome ? await releaseLeaseByPolicy(db, deps.registry, { leaseId: lease.id, runId: input.runId, outcome: leaseOutcome }) : null;
    finalization = { outcome: outcome.kind, lease: released?.kind ?? null };
  }
  return { actionId: input.actionId, runId: input.runId, leaseId: lease.id, requestId: admitted.requestId, status: "readmitted", retryState: "readmitted", finalization };
}

function refusal(code: string, status: 409 | 422, message: string, input: { actionId: string; runId: string }): DomainError {
  return new DomainError(status === 422 ? "invalid" : "conflict", code, message, { actionId: input.actionId, runId: input.runId });
}

/** Issue 23: the lease's own host (a local sandbox) and the run's workspace host must be this one. */
async function refuseOtherHost(db: PrismaClient, hostId: string, lease: { hostId: string | null } | null, runId: string): Promise<void> {
  const [row] = await db.$queryRaw<{ host_id: string }[]>(foreignRunsSql([runId], hostId));
  const other = boundElsewhere(lease?.hostId, hostId) ?? row?.host_id ?? null;
  if (other) {
    throw new DomainError("conflict", "export_retry_on_other_host", `The retained sandbox and workspace are host ${other}'s; retry the export from a console or CLI of that host (this one is ${hostId}).`, { hostId, otherHostId: other });
  }
}
