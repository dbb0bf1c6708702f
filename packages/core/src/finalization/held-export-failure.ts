// The two export failures that no further export of this attempt can mend, held for people
// (R-EX-1, R-EX-4, R-UA-3, R-UA-4):
//   - the retry budget is spent on transient failures: the board's export-only-retry hold;
//   - the archive crossed an entry or size limit, or has colliding paths: a second export cannot
//     change that and omitting it would drop every file of the task silently, so the board's
//     limit hold opens naming the limit.
// Both are written by holdExportFailure in ONE transaction (as this owner), in this order: the
// operation fails, the coordinator settles terminal, the exact sandbox the prepared descriptor
// names is pinned by a stop-only intent (ephemeral included: no release or destroy may touch its
// files), the hold opens, the run event, and the run fails (task to people). The accepted result
// stays as it is. The caller's release then stops and retains the sandbox by that intent; after a
// crash the cleanup sweep does.
import type { Prisma, TransactionClient } from "@copyback/db/client";
import { pinLeaseForRecovery } from "../leases/stop-intent";
import { openExportLimitAction, openExportRetryExhaustedAction } from "../records/actions";
import { advanceFinalization } from "../records/coordinator";
import { recordRunEvent } from "../records/run-log";
import { finishWorkspaceOperation } from "../records/workspace-operations";
import type { ExportLimitDetail } from "./export-policy";
import type { OwnedFinalization } from "./finalization-context";
import type { FinalizeOutcome } from "./finalize-outcome";
import type { CopybackFailureDecision } from "./finalize-policy";
import { heldSandboxOf, type HeldSandbox } from "./held-sandbox";
import { loadPreparedWorkspace } from "./workspace-descriptor";

/** What differs between the held export failures; holdExportFailure writes the rest the same way. */
export interface HeldExportFailure {
  /** The code the coordinator settles with, the run fails with and the outcome names. */
  code: string;
  /** The failed `workspace_finalize` operation's own error code and metadata. */
  operation: { errorCode: string; metadata: Prisma.InputJsonObject };
  failureDetail: Prisma.InputJsonObject;
  openHold(tx: TransactionClient, sandbox: HeldSandbox): Promise<{ actionId: string }>;
  /** The error-level run event; its payload goes between the operation and the hold's action and pin. */
  event: { code: string; message: string; payload: Prisma.InputJsonObject };
  runMessage: string;
}

/** R-EX-1: the budget counts transient export failures; the last attempt's code names the failure. */
export function retryBudgetSpent(decision: Extract<CopybackFailureDecision, { kind: "exhausted" }>): HeldExportFailure {
  const { attempts, lastCode } = decision;
  return {
    code: decision.code,
    operation: { errorCode: lastCode, metadata: { attempt: attempts, exhausted: true } },
    failureDetail: { attempts, lastFailureCode: lastCode },
    openHold: (tx, sandbox) => openExportRetryExhaustedAction(tx, { ...sandbox, attempts, lastFailureCode: lastCode }),
    event: {
      code: "workspace.copyback_exhausted",
      message: `Copying the sandbox back failed ${attempts} times (${lastCode}, a transport or copyback failure); the saved result and the sandbox are kept for an export-only retry.`,
      payload: { lastFailureCode: lastCode, attempts },
    },
    runMessage: `Copying the sandbox's files back failed ${attempts} times (${lastCode}); the saved result and the sandbox are kept for an export-only retry.`,
  };
}

/** R-UA-3, R-UA-4: the operation and the coordinator name the limit; nothing was written or omitted. */
export function archiveLimitReached(attempt: number, code: string, detail: ExportLimitDetail): HeldExportFailure {
  return {
    code,
    operation: { errorCode: code, metadata: { attempt } },
    failureDetail: { attempt, ...detail },
    openHold: (tx, sandbox) =>
      openExportLimitAction(tx, {
        ...sandbox,
        failureCode: code,
        limit: { kind: detail.kind, violation: detail.violation, limit: detail.limit, max: detail.max, path: detail.path, violationCodes: detail.violationCodes },
      }),
    event: {
      code: "workspace.copyback_failed",
      message: `The copyback stopped at an archive limit (${code}); nothing was written or omitted, the saved result and the sandbox are kept for an operator.`,
      payload: { errorCode: code, violation: detail.violation, limit: detail.limit },
    },
    runMessage: `The copyback stopped at an archive limit (${code}); the saved result and the sandbox are kept for an operator.`,
  };
}

export async function holdExportFailure(f: OwnedFinalization, tx: TransactionClient, operationId: string, failure: HeldExportFailure): Promise<FinalizeOutcome> {
  const { key } = f;
  const descriptor = await loadPreparedWorkspace(tx, key);
  const lease = await tx.environmentLease.findUnique({ where: { id: descriptor.leaseId }, select: { id: true, providerLeaseId: true, pluginId: true } });
  const coordinator = await tx.nativeRunFinalization.findUniqueOrThrow({ where: { runId: key.runId }, select: { resultId: true } });
  await finishWorkspaceOperation(tx, operationId, { status: "failed", ...failure.operation });
  await advanceFinalization(tx, {
    runId: key.runId,
    from: ["workspace_finalizing"],
    to: "terminal_failure",
    patch: { failureCode: failure.code, failureDetail: failure.failureDetail },
  });
  const pinned = lease ? await pinLeaseForRecovery(tx, lease.id) : { kind: "nothing_to_pin" as const, status: "missing" };
  const action = await failure.openHold(tx, heldSandboxOf(key, coordinator.resultId, lease));
  await recordRunEvent(tx, f.event("error", failure.event.code, failure.event.message, {
    operationId,
    ...failure.event.payload,
    actionId: action.actionId,
    leasePinned: pinned.kind,
  }));
  await f.endRunFailed(tx, failure.code, failure.runMessage);
  return { kind: "terminal_failure", operationId, code: failure.code };
}
