// Recovery details of the export holds, for `runtime:manage` only: the exhausted
// export retry (R-EX-1) and the archive-limit hold (R-UA-3). What the spec's operator steps need
// to verify before anything is repaired: the run, the lease, the provider allocation and the
// stopped-provider receipt; each finalization attempt; and, for the exhausted hold, the exact
// export-only retry call (REST and CLI, core's operator guidance). The copyback-failed hold (R-EX-4,
// R-UI-2) shows the same run, lease, receipt and attempts, plus what failed, whether host writes
// began, the conflicts and its resolution path (the guarded resolve call: "restored" with the stop
// receipt, or a false_positive / cancelled disposition). Read through core's schemas; only the
// fields named here are copied out.
import { z } from "zod";
import type { PrismaClient } from "@copyback/db/client";
import { confirmedStopReceipt, readStopIntent } from "@copyback/core/leases";
import {
  readCopybackFailedEvidence,
  readExportLimitEvidence,
  readExportRetryExhaustedEvidence,
  COPYBACK_FAILED_CAUSE,
  EXPORT_LIMIT_CAUSE,
  EXPORT_RETRY_EXHAUSTED_CAUSE,
} from "@copyback/core/records";
import { type OpenActionRow, exportRetryCall, fileHoldResolveCall } from "@copyback/core/recovery";
import { finalizationAttemptSchema, finalizationAttemptsOf } from "../runs/finalization-attempts";
import { copybackFailureInWords } from "./recovery-words";

export const EXPORT_HOLD_CAUSES: readonly string[] = [EXPORT_RETRY_EXHAUSTED_CAUSE, EXPORT_LIMIT_CAUSE, COPYBACK_FAILED_CAUSE];

export const exportHoldSchema = z.object({
  kind: z.enum(["retry_exhausted", "limit", "copyback_failed"]),
  run: z.object({ id: z.uuid(), status: z.string(), errorCode: z.string().nullable(), phase: z.string().nullable(), attempt: z.number().int().nullable() }).nullable(),
  lease: z
    .object({
      id: z.uuid(),
      status: z.string(),
      policy: z.string(),
      provider: z.string(),
      pluginId: z.string(),
      /** The provider allocation (sandbox id) the hold preserves. */
      providerLeaseId: z.string().nullable(),
      /** A stop-only intent waits for a confirmed stop (the cleanup sweep retries it). */
      stopPending: z.boolean(),
    })
    .nullable(),
  /** The confirmed stopped-provider receipt of that exact allocation, or null (not stopped yet, or not provably). */
  stoppedReceipt: z.object({ method: z.string(), requestId: z.string(), pluginId: z.string(), providerLeaseId: z.string(), stoppedAt: z.string() }).nullable(),
  /** The limit crossed (limit holds only). */
  limit: z.object({ violation: z.string(), limit: z.string().nullable(), max: z.number().nullable(), path: z.string() }).nullable(),
  attempts: z.array(finalizationAttemptSchema),
  /** The exact export-only retry call (exhausted holds only: the limit hold has no automatic retry). */
  retryCall: z
    .object({
      method: z.literal("POST"),
      path: z.string(),
      url: z.string(),
      body: z.object({ actionId: z.uuid(), runId: z.uuid(), repairNote: z.string() }),
      curl: z.string(),
      cli: z.string(),
    })
    .nullable(),
  /** R-EX-4, R-UI-2: what failed (copyback-failed holds only): the kind in words, code, host writes, conflicts. */
  copybackFailure: z
    .object({
      failure: z.enum(["merge_conflict", "binding_changed", "copyback_failed", "result_refused"]),
      failureInWords: z.string(),
      failureCode: z.string(),
      hostWritesStarted: z.boolean(),
      /** How many conflicts the merge found; the first ones (workspace-relative paths) are listed. */
      conflictCount: z.number().int().nullable(),
      conflicts: z.array(z.object({ path: z.string(), kind: z.string() })),
      bindingReason: z.string().nullable(),
    })
    .nullable(),
  /** R-EX-4, R-UI-2: the resolution path (copyback-failed holds only): the resolve call prefilled, REST and CLI, and a disposition's CLI form. */
  resolveCall: z
    .object({
      method: z.literal("POST"),
      path: z.string(),
      url: z.string(),
      body: z.object({
        actionId: z.uuid(),
        outcome: z.literal("restored"),
        sourceIssueStatus: z.string(),
        executionReconciliation: z.object({ runId: z.uuid(), leaseId: z.uuid().nullable(), runStatus: z.string(), noExternalActionsPerformed: z.literal(false) }),
        workspaceRepairEvidence: z.object({ stopEvidence: z.string(), recoveredFiles: z.string() }),
      }),
      curl: z.string(),
      cli: z.string(),
      dispositionCli: z.string(),
    })
    .nullable(),
});
export type ExportHold = z.infer<typeof exportHoldSchema>;

export interface ExportHoldFacts {
  run: { id: string; status: string; errorCode: string | null; finalization: { phase: string; attempt: number } | null } | null;
  lease: { id: string; companyId: string; runId: string | null; status: string; leasePolicy: string; provider: string; pluginId: string; providerLeaseId: string | null; metadata: unknown } | null;
  operations: { phase: string; status: string; errorCode: string | null; startedAt: Date; finishedAt: Date | null; metadata: unknown }[];
  /** The task's status now (the resolve call sends it back unchanged); without it no call is prefilled. */
  issueStatus?: string | null;
}

/** Pure: the details of one export hold from its row and what was loaded about its run and lease. */
export function exportHoldDetails(row: Pick<OpenActionRow, "id" | "issueId" | "cause" | "runId" | "leaseId" | "evidence">, facts: ExportHoldFacts, origin: string | null): ExportHold | null {
  if (!EXPORT_HOLD_CAUSES.includes(row.cause)) return null;
  const exhausted = row.cause === EXPORT_RETRY_EXHAUSTED_CAUSE;
  const failed = row.cause === COPYBACK_FAILED_CAUSE ? readCopybackFailedEvidence(row.evidence) : null;
  const limitEvidence = exhausted || row.cause === COPYBACK_FAILED_CAUSE ? null : readExportLimitEvidence(row.evidence);
  const runId = row.runId ?? (exhausted ? readExportRetryExhaustedEvidence(row.evidence)?.runId : (limitEvidence?.runId ?? failed?.runId)) ?? null;
  const lease = facts.lease;
  const receipt = lease ? confirmedStopReceipt(lease.metadata, { pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId }) : null;
  const intent = lease ? readStopIntent(lease.metadata, lease) : null;
  return {
    kind: exhausted ? "retry_exhausted" : row.cause === COPYBACK_FAILED_CAUSE ? "copyback_failed" : "limit",
    run: facts.run
      ? { id: facts.run.id, status: facts.run.status, errorCode: facts.run.errorCode, phase: facts.run.finalization?.phase ?? null, attempt: facts.run.finalization?.attempt ?? null }
      : null,
    lease: lease
      ? { id: lease.id, status: lease.status, policy: lease.leasePolicy, provider: lease.provider, pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId, stopPending: intent?.kind === "present" }
      : null,
    stoppedReceipt:
      receipt?.kind === "confirmed"
        ? { method: receipt.receipt.method, requestId: receipt.receipt.requestId, pluginId: receipt.receipt.pluginId, providerLeaseId: receipt.receipt.providerLeaseId, stoppedAt: receipt.receipt.stoppedAt }
        : null,
    limit: limitEvidence ? { violation: limitEvidence.limit.violation, limit: limitEvidence.limit.limit, max: limitEvidence.limit.max, path: limitEvidence.limit.path } : null,
    attempts: finalizationAttemptsOf(facts.operations),
    retryCall: exhausted && runId ? exportRetryCall({ origin, issueId: row.issueId, actionId: row.id, runId }) : null,
    copybackFailure: failed
      ? {
          failure: failed.failure,
          failureInWords: copybackFailureInWords(failed.failure),
          failureCode: failed.failureCode,
          hostWritesStarted: failed.hostWritesStarted,
          conflictCount: failed.conflictCount,
          conflicts: failed.conflicts,
          bindingReason: failed.bindingReason,
        }
      : null,
    resolveCall:
      failed && runId && facts.run && facts.issueStatus
        ? fileHoldResolveCall({
            origin,
            issueId: row.issueId,
            actionId: row.id,
            runId,
            leaseId: row.leaseId ?? failed.leaseId,
            sourceIssueStatus: facts.issueStatus,
            runStatus: facts.run.status,
          })
        : null,
  };
}

/** Loads the run, lease and finalize operations of each export hold among `rows` (others are left out). */
export async function loadExportHolds(
  db: PrismaClient,
  companyId: string,
  rows: readonly OpenActionRow[],
  origin: string | null,
  issueStatus: string | null = null,
): Promise<Map<string, ExportHold>> {
  const holds = new Map<string, ExportHold>();
  for (const row of rows) {
    if (!EXPORT_HOLD_CAUSES.includes(row.cause)) continue;
    const run = row.runId
      ? await db.heartbeatRun.findFirst({
          where: { id: row.runId, companyId },
          select: { id: true, status: true, errorCode: true, finalization: { select: { phase: true, attempt: true } } },
        })
      : null;
    const lease = row.leaseId
      ? await db.environmentLease.findFirst({
          where: { id: row.leaseId, companyId },
          select: { id: true, companyId: true, runId: true, status: true, leasePolicy: true, provider: true, pluginId: true, providerLeaseId: true, metadata: true },
        })
      : null;
    const operations = row.runId
      ? await db.workspaceOperation.findMany({
          where: { companyId, runId: row.runId, phase: "workspace_finalize" },
          orderBy: [{ startedAt: "asc" }, { id: "asc" }],
          take: 50,
          select: { phase: true, status: true, errorCode: true, startedAt: true, finishedAt: true, metadata: true },
        })
      : [];
    const details = exportHoldDetails(row, { run, lease, operations, issueStatus }, origin);
    if (details) holds.set(row.id, details);
  }
  return holds;
}
