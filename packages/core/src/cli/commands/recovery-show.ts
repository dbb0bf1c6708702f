// `copyback recovery show ACTION_ID`: one recovery action with its evidence, the run's state
// now (is the held receipt still on it?), and, for an open unverified-owner hold, the exact
// attestation calls prefilled with the action id, run id and owner token, and the action's
// "Continue from saved sources" decision if one was recorded (its status, the fresh run it was
// delivered as, or why its delivery waits: R-RC-3). For a copyback-failed hold (R-EX-4, R-UI-2): what
// failed, whether host writes began, the conflicts, the lease with its stop receipt and the
// resolution path prefilled (restored with the stop receipt, or a disposition). Reads only.
import type { PrismaClient } from "@copyback/db/client";
import { notFound } from "../../errors";
import { readFinalizationOwner, readReceiptSha256 } from "../../records/finalization-owner-receipt";
import { confirmedStopReceipt, readStopIntent } from "../../leases/lease-metadata";
import { attestationTokenOf, isOpenRecoveryActionStatus, readCopybackFailedEvidence, readOwnerUnverifiedEvidence, type CopybackFailedEvidence, type OwnerUnverifiedEvidence } from "../../records/actions";
import { COPYBACK_FAILED_CAUSE, EXPORT_RETRY_EXHAUSTED_CAUSE, OWNER_UNVERIFIED_CAUSE } from "../../records/causes";
import { withCliDatabase } from "../database";
import { EXIT } from "../exit-codes";
import { formatAge } from "../format";
import type { CommandContext, CommandResult } from "../io";
import { findAction, toView, type RecoveryActionView } from "../recovery/action-view";
import { attestationCall, exportRetryCall, fileHoldResolveCall, type AttestationCall, type ExportRetryCall, type FileHoldResolveCall } from "../../recovery/operator/guidance";
import type { ReconstructionIntentView } from "../../recovery/reconstruction/contract";
import { intentView } from "../../recovery/reconstruction/intent-view";

/** Whether the run still carries the receipt the hold names (what an attestation releases). */
export type ReceiptState = "held" | "released" | "other_owner" | "malformed" | "no_run";

export async function recoveryShow(ctx: CommandContext, actionId: string): Promise<CommandResult> {
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const row = await findAction(prisma, actionId);
    if (!row) throw notFound(`The recovery action ${actionId}`);
    const action = toView(row, new Date());
    const run = row.runId
      ? await prisma.heartbeatRun.findUnique({
          where: { id: row.runId },
          select: {
            status: true,
            runnerProfileJson: true,
            finalization: { select: { phase: true, attempt: true, nextAttemptAt: true } },
          },
        })
      : null;
    const intentRow = await prisma.reconstructionIntent.findUnique({ where: { recoveryActionId: row.id } });
    const intent = intentRow ? intentView(intentRow) : null;
    const owner =
      row.cause === OWNER_UNVERIFIED_CAUSE ? readOwnerUnverifiedEvidence(row.evidence) : null;
    // A malformed receipt's hold is attested with its fixed reference (attestationTokenOf).
    const attestToken = owner ? attestationTokenOf(owner) : null;
    const storedSha256 = owner?.ownerToken === null && owner.receiptSha256 && row.runId ? await readReceiptSha256(prisma, row.runId) : null;
    const receipt = receiptState(run?.runnerProfileJson, owner?.ownerToken ?? null, run !== null, owner?.receiptSha256 ?? null, storedSha256);
    const open = isOpenRecoveryActionStatus(row.status);
    const call =
      owner && open && attestToken !== null && row.runId !== null && !action.attested
        ? attestationCall({
            origin: null,
            issueId: row.issueId,
            actionId: row.id,
            runId: row.runId,
            ownerToken: attestToken,
          })
        : null;
    // An open exhausted-export hold names the exact export-only retry (R-EX-2).
    const retryCall = open && row.cause === EXPORT_RETRY_EXHAUSTED_CAUSE && row.runId !== null ? exportRetryCall({ origin: null, issueId: row.issueId, actionId: row.id, runId: row.runId }) : null;
    // R-EX-4, R-UI-2: the copyback-failed hold's details and its resolution path (an open one).
    const failed = row.cause === COPYBACK_FAILED_CAUSE ? readCopybackFailedEvidence(row.evidence) : null;
    const copybackFailure = failed ? await copybackFailureView(prisma, row.companyId, failed) : null;
    const resolveCall =
      failed && open && row.runId !== null && run
        ? fileHoldResolveCall({ origin: null, issueId: row.issueId, actionId: row.id, runId: row.runId, leaseId: failed.leaseId, sourceIssueStatus: action.issueStatus, runStatus: run.status })
        : null;
    const runView = run
      ? {
          status: run.status,
          finalizationPhase: run.finalization?.phase ?? null,
          attempt: run.finalization?.attempt ?? null,
          nextAttemptAt: run.finalization?.nextAttemptAt?.toISOString() ?? null,
          receipt,
        }
      : null;
    return {
      exitCode: EXIT.ok,
      json: {
        database: source,
        action: { ...action, evidence: row.evidence },
        ownerToken: attestToken,
        run: runView,
        attestCall: call,
        retryExportCall: retryCall,
        copybackFailure,
        resolveCall,
        reconstruction: intent,
      },
      text: [...render(action, row.evidence, owner, runView, call, retryCall), ...renderCopybackFailure(copybackFailure, resolveCall), ...renderIntent(intent)],
    };
  });
}

function receiptState(
  runnerProfileJson: unknown,
  token: string | null,
  runExists: boolean,
  heldSha256: string | null = null,
  storedSha256: string | null = null,
): ReceiptState {
  if (!runExists) return "no_run";
  const current = readFinalizationOwner(runnerProfileJson);
  if (current.kind === "none") return "released";
  // A malformed receipt's hold is in force while the run carries exactly that receipt.
  if (heldSha256 !== null) return current.kind === "malformed" && storedSha256 === heldSha256 ? "held" : "other_owner";
  if (current.kind === "malformed") return "malformed";
  return token !== null && current.receipt.token === token ? "held" : "other_owner";
}

const RECEIPT_TEXT: Record<ReceiptState, string> = {
  held: "the run still carries this owner's receipt (the hold is in force)",
  released:
    "released: the run carries no owner receipt (attested or cleared); the reconciler may finish the copyback",
  other_owner: "the run carries another owner's receipt now (this hold is stale)",
  malformed: "the run's owner receipt is malformed: inspect the run before anything else",
  no_run: "the run does not exist",
};

function render(
  a: RecoveryActionView,
  evidence: unknown,
  owner: OwnerUnverifiedEvidence | null,
  run: {
    status: string;
    finalizationPhase: string | null;
    attempt: number | null;
    nextAttemptAt: string | null;
    receipt: ReceiptState;
  } | null,
  call: AttestationCall | null,
  retryCall: ExportRetryCall | null = null,
): string[] {
  const text = [
    `recovery action ${a.id}: ${a.status}${a.outcome ? ` (${a.outcome})` : ""}, ${a.ownerType}-owned, opened ${formatAge(a.ageSeconds * 1000)} ago (${a.createdAt})`,
    `  company  ${a.companyName} (${a.companyId})`,
    `  task     ${a.issueIdentifier} "${a.issueTitle}" (${a.issueStatus}), issue ${a.issueId}`,
    `  cause    ${a.cause}`,
  ];
  if (a.runId !== null) {
    text.push(
      run
        ? `  run      ${a.runId}: ${run.status}, finalization ${run.finalizationPhase ?? "-"} (attempt ${run.attempt ?? "-"}${run.nextAttemptAt ? `, next attempt ${run.nextAttemptAt}` : ""})`
        : `  run      ${a.runId}: not found`,
    );
  }
  if (owner) {
    text.push(
      `  reason   ${owner.reason}, detected ${owner.detectedAt} in phase ${owner.phase}`,
      owner.ownerToken !== null
        ? `  owner    token ${owner.ownerToken}`
        : owner.receiptSha256
          ? `  owner    malformed receipt, sha256 ${owner.receiptSha256}; attest with the token ${attestationTokenOf(owner)}`
          : "  owner    (none: the receipt was malformed; the reconciler's next pass names it)",
      owner.owner
        ? `           controller pid ${owner.owner.pid} on ${owner.owner.host} (process start ${owner.owner.processStart}, boot ${owner.owner.bootId})`
        : "           controller unknown (malformed receipt)",
      `  receipt  ${run ? RECEIPT_TEXT[run.receipt] : RECEIPT_TEXT.no_run}`,
      `  result   ${owner.resultId ?? "-"}; leases ${owner.leaseIds.length > 0 ? owner.leaseIds.join(", ") : "-"}`,
    );
    if (owner.attestation) {
      const who = owner.attestation.actor.id
        ? `${owner.attestation.actor.type} ${owner.attestation.actor.id}`
        : owner.attestation.actor.type;
      text.push(
        `  attested ${owner.attestation.attestedAt} by ${who}: ${owner.attestation.stopEvidence}`,
      );
    } else if (owner.harnessCheck) {
      // R-RW-3: why the cloud harness's automatic takeover has not happened (a fixed code).
      text.push(`  harness  ${owner.harnessCheck.code} (${owner.harnessCheck.checkedAt}): ${owner.harnessCheck.message}`);
    }
  } else {
    text.push(`  evidence ${JSON.stringify(evidence)}`);
  }
  if (a.nextAction) text.push("", "next action:", `  ${a.nextAction}`);
  if (call) {
    text.push(
      "",
      "attest, after verifying on the deployment platform that the controller and its copyback subprocesses stopped:",
      "  REST, with a key that has runtime:confirm_owner_stop (COPYBACK_URL: the console's address):",
      ...indent(call.curl, "    "),
      "  CLI, as an instance operator with database access:",
      ...indent(call.cli, "    "),
    );
  }
  if (retryCall) {
    text.push(
      "",
      "export-only retry, after verifying the run, lease and stopped-provider receipt and repairing the provider's transport without touching the sandbox's files:",
      "  REST, with a key that has runtime:manage (COPYBACK_URL: the console's address):",
      ...indent(retryCall.curl, "    "),
      "  CLI, as an instance operator with database access:",
      ...indent(retryCall.cli, "    "),
    );
  }
  return text;
}

export interface CopybackFailureView {
  failure: CopybackFailedEvidence["failure"];
  failureCode: string;
  hostWritesStarted: boolean;
  conflictCount: number | null;
  conflicts: CopybackFailedEvidence["conflicts"];
  bindingReason: string | null;
  /** The recorded lease as it is now; null when the hold names none (or it is gone). */
  lease: { id: string; status: string; providerLeaseId: string | null; pluginId: string; stopPending: boolean } | null;
  /** The confirmed stopped-provider receipt of that exact allocation (what "restored" needs), or null. */
  stoppedReceipt: { method: string; requestId: string; stoppedAt: string } | null;
}

/** R-EX-4, R-UI-2: the copyback-failed hold's recorded failure with its lease and stop receipt now. */
async function copybackFailureView(prisma: PrismaClient, companyId: string, evidence: CopybackFailedEvidence): Promise<CopybackFailureView> {
  const lease = evidence.leaseId
    ? await prisma.environmentLease.findFirst({
        where: { id: evidence.leaseId, companyId },
        select: { id: true, companyId: true, runId: true, status: true, pluginId: true, providerLeaseId: true, metadata: true },
      })
    : null;
  const receipt = lease ? confirmedStopReceipt(lease.metadata, { pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId }) : null;
  return {
    failure: evidence.failure,
    failureCode: evidence.failureCode,
    hostWritesStarted: evidence.hostWritesStarted,
    conflictCount: evidence.conflictCount,
    conflicts: evidence.conflicts,
    bindingReason: evidence.bindingReason,
    lease: lease
      ? { id: lease.id, status: lease.status, providerLeaseId: lease.providerLeaseId, pluginId: lease.pluginId, stopPending: readStopIntent(lease.metadata, lease).kind === "present" }
      : null,
    stoppedReceipt: receipt?.kind === "confirmed" ? { method: receipt.receipt.method, requestId: receipt.receipt.requestId, stoppedAt: receipt.receipt.stoppedAt } : null,
  };
}

function renderCopybackFailure(view: CopybackFailureView | null, call: FileHoldResolveCall | null): string[] {
  if (!view) return [];
  const lines = [
    "",
    "copyback failure:",
    `  failure  ${view.failure} (${view.failureCode}); host writes began: ${view.hostWritesStarted ? "yes" : "no"}${view.bindingReason ? `; binding ${view.bindingReason}` : ""}`,
  ];
  if (view.conflictCount !== null) {
    const shown = view.conflicts.map((c) => `${c.path} (${c.kind})`).join(", ");
    lines.push(`  conflicts ${view.conflictCount}: ${shown}${view.conflictCount > view.conflicts.length ? `, and ${view.conflictCount - view.conflicts.length} more` : ""}`);
  }
  lines.push(
    view.lease
      ? `  lease    ${view.lease.id}, allocation ${view.lease.providerLeaseId ?? "none recorded"} on ${view.lease.pluginId} (${view.lease.status})`
      : "  lease    none recorded",
    view.stoppedReceipt
      ? `           stop receipt: stopped ${view.stoppedReceipt.stoppedAt} by ${view.stoppedReceipt.method} (request ${view.stoppedReceipt.requestId})`
      : `           stop receipt: not confirmed yet${view.lease?.stopPending ? " (the cleanup sweep retries the verified stop)" : ""}; do not record "restored" before it is`,
  );
  if (call) {
    lines.push(
      "",
      "resolve, after copying what matters from the retained sandbox to the host workspace (or confirming there is nothing to keep), once the stop receipt is confirmed:",
      "  REST, with a key that has runtime:manage (COPYBACK_URL: the console's address):",
      ...indent(call.curl, "    "),
      "  CLI, as an instance operator with database access:",
      ...indent(call.cli, "    "),
      "  or close it deliberately (false_positive, or --outcome cancelled), with a note:",
      ...indent(call.dispositionCli, "    "),
    );
  }
  return lines;
}

/** The action's "Continue from saved sources" decision, if any (R-RC-3: why a pending one waits). */
function renderIntent(intent: ReconstructionIntentView | null): string[] {
  if (!intent) return [];
  const state =
    intent.status === "delivered"
      ? `delivered as run ${intent.deliveredRunId ?? "-"}`
      : intent.status === "pending"
        ? "pending: the reconciler delivers it as a fresh run"
        : intent.status;
  const lines = ["", `continue from saved sources: intent ${intent.id}, recorded ${intent.createdAt}, ${state}`, `  sources  ${intent.attachmentHashes.length} attachment(s); source run ${intent.sourceRunId}`];
  if (intent.deferral) lines.push(`  waiting  ${intent.deferral.message} (${intent.deferral.code}, since ${intent.deferral.since}, last seen ${intent.deferral.lastSeenAt})`);
  return lines;
}

function indent(block: string, prefix: string): string[] {
  return block.split("\n").map((line) => `${prefix}${line}`);
}
