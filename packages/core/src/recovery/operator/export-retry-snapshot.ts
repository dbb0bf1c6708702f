// The snapshot decideExportRetry reads (R-EX-2, R-EX-3, R-EX-5), loaded inside the caller's
// transaction, at both looks of the export-only retry (admit, then readmit after the resume): the
// run's finalization advisory lock (tried, as the finalizer and reconstruction take it: busy means
// a copyback owner is active), then row locks on the run, its task and its coordinator (the
// binding, finalization/binding.ts), the recovery action and its lease; the descriptor, competing
// leases and newer runs are read under them.
// The sandbox's probe is taken before the transaction (provider I/O never runs under row locks)
// and passed in. The same shape as reconstruction's loader (reconstruction/load-snapshot.ts).
import type { TransactionClient } from "@copyback/db/client";
import { isDomainError, notFound } from "../../errors";
import { loadRunBinding } from "../../finalization/binding";
import { finalizationLockKey } from "../../finalization/finalization-owner";
import { loadPreparedWorkspace } from "../../finalization/workspace-descriptor";
import { confirmedStopReceipt, readStopIntent, verifyWorkspaceSentinel } from "../../leases/lease-metadata";
import type { LeaseProviderRegistry, LeaseRow } from "../../leases/lease-types";
import { pluginForLease } from "../../leases/plugin-for-lease";
import { hasCapability } from "../../providers/registry";
import { readExportRetryExhaustedEvidence } from "../../records/actions";
import { readExportRetry } from "../../records/actions-export-retry";
import { readDiscardIntent } from "../../sandboxes/discard-intent";
import type { ExportRetrySnapshot } from "../policies/decide-export-retry";
import { identityOf, type SandboxProbe } from "../../leases/sandbox-probe";

/** The request the snapshot is taken for, with the company and task it is scoped to. */
export interface ExportRetryRequest {
  companyId: string;
  issueId: string;
  runId: string;
  actionId: string;
}

export interface LoadedExportRetrySnapshot {
  policy: ExportRetrySnapshot;
  /** The hold's lease, locked (null when the hold names none or it is not this company's). */
  lease: LeaseRow | null;
  /** The task's status version now: the re-admitted run's claim is re-recorded to it. */
  issueStatusVersion: number | null;
}

/** Loads the admission snapshot under the run's advisory lock and row locks (run, issue, coordinator, action, lease). */
export async function loadExportRetrySnapshot(
  tx: TransactionClient,
  registry: LeaseProviderRegistry,
  input: ExportRetryRequest,
  stage: "admit" | "readmit",
  sandbox: SandboxProbe,
  requestId?: string,
): Promise<LoadedExportRetrySnapshot> {
  const [lock] = await tx.$queryRaw<{ locked: boolean }[]>`
    SELECT pg_try_advisory_xact_lock(hashtextextended(${finalizationLockKey(input.companyId, input.runId)}, 0)) AS locked`;
  const binding = await loadRunBinding(tx, { companyId: input.companyId, runId: input.runId });
  const [actionRow] = await tx.$queryRaw<{ id: string; cause: string; status: string; run_id: string | null; lease_id: string | null; evidence: unknown }[]>`
    SELECT id, cause, status, run_id, lease_id, evidence FROM issue_recovery_actions
    WHERE id = ${input.actionId}::uuid AND company_id = ${input.companyId}::uuid AND issue_id = ${input.issueId}::uuid FOR UPDATE`;
  if (!actionRow) throw notFound("The recovery action");
  const evidence = readExportRetryExhaustedEvidence(actionRow.evidence);
  const retry = readExportRetry(actionRow.evidence);
  const leaseLocked = actionRow.lease_id
    ? await tx.$queryRaw<{ id: string }[]>`SELECT id FROM environment_leases WHERE id = ${actionRow.lease_id}::uuid AND company_id = ${input.companyId}::uuid FOR UPDATE`
    : [];
  const lease = leaseLocked.length === 1 ? await tx.environmentLease.findUniqueOrThrow({ where: { id: actionRow.lease_id as string } }) : null;
  const coordinator = await tx.nativeRunFinalization.findUnique({ where: { runId: input.runId }, select: { failureCode: true } });
  const issue = binding.issue ? await tx.issue.findUnique({ where: { id: binding.issue.id }, select: { statusVersion: true } }) : null;

  let descriptorLeaseId: string | null = null;
  if (binding.run) {
    try {
      descriptorLeaseId = (await loadPreparedWorkspace(tx, { companyId: input.companyId, runId: input.runId, issueId: binding.run.issueId })).leaseId;
    } catch (error) {
      if (!isDomainError(error)) throw error;
    }
  }
  const competing = lease
    ? await tx.environmentLease.findMany({
        where: {
          id: { not: lease.id },
          status: { in: ["active", "pending_cleanup", "released"] },
          OR: [
            ...(lease.providerLeaseId ? [{ pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId }] : []),
            { runId: input.runId, status: { in: ["active", "pending_cleanup"] } },
          ],
        },
        select: { id: true },
        take: 10,
      })
    : [];
  const runRow = binding.run ? await tx.heartbeatRun.findUnique({ where: { id: input.runId }, select: { createdAt: true } }) : null;
  const newer =
    binding.run && runRow
      ? await tx.heartbeatRun.findMany({
          where: { companyId: input.companyId, nativeIssueId: binding.run.issueId, id: { not: input.runId }, createdAt: { gt: runRow.createdAt } },
          select: { id: true },
          take: 10,
        })
      : [];

  const lookup = lease ? pluginForLease(registry, lease) : null;
  const identity = lease ? identityOf(lease) : null;
  const sentinel =
    lease && identity && lease.runId
      ? verifyWorkspaceSentinel(lease.metadata, { leaseId: lease.id, pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId, runId: lease.runId, fingerprint: identity.fingerprint }).kind
      : "missing";
  const intent = lease ? readStopIntent(lease.metadata, lease) : null;
  const policy: ExportRetrySnapshot = {
    stage,
    request: { runId: input.runId, actionId: input.actionId },
    action: {
      cause: actionRow.cause,
      status: actionRow.status,
      runId: actionRow.run_id,
      leaseId: actionRow.lease_id,
      evidence: evidence ? { resultId: evidence.resultId, leaseId: evidence.leaseId, providerLeaseId: evidence.providerLeaseId, pluginId: evidence.pluginId } : null,
      retry: retry ? { requestId: retry.requestId, state: retry.state } : null,
    },
    lockAcquired: lock?.locked === true,
    binding,
    failureCode: coordinator?.failureCode ?? null,
    descriptorLeaseId,
    lease: lease
      ? {
          id: lease.id,
          companyId: lease.companyId,
          runId: lease.runId,
          pluginId: lease.pluginId,
          providerLeaseId: lease.providerLeaseId,
          status: lease.status,
          policy: lease.leasePolicy,
          receipt: confirmedStopReceipt(lease.metadata, lease).kind,
          sentinel: sentinel === "valid" ? "valid" : sentinel,
          identityRecorded: identity !== null,
          retryIntentHeld: intent?.kind === "present" && intent.value.requestId === (requestId ?? retry?.requestId),
          discarding: readDiscardIntent(lease.metadata).kind !== "absent",
        }
      : null,
    competingLeaseIds: competing.map((c) => c.id),
    newerRunIds: newer.map((n) => n.id),
    plugin:
      lookup === null
        ? { kind: "unavailable", message: "The hold names no lease." }
        : lookup.kind === "found"
          ? {
              kind: "found",
              stop: hasCapability(lookup.plugin, "environmentStopLease"),
              resume: hasCapability(lookup.plugin, "resume"),
              inspect: hasCapability(lookup.plugin, "inspect"),
              sentinel: hasCapability(lookup.plugin, "workspaceSentinel"),
            }
          : { kind: "unavailable", message: lookup.message },
    sandbox,
  };
  return { policy, lease, issueStatusVersion: issue?.statusVersion ?? null };
}
