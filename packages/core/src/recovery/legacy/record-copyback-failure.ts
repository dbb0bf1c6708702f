// R-RR-2: a legacy run that could not copy its required workspace files back. In ONE transaction:
// the run fails (the task goes to people through the status arbiter), its exact lease gets the
// retention intent (`retain_on_failure`, a stop-only intent, the retained-source record) and the
// board-owned repair hold opens. A crash anywhere in between leaves none of the three (tested with
// an injected failure between the steps). The caller then releases the lease by policy, which for
// a failed run stops and retains it and verifies the provider's receipt; a failed stop stays
// pending_cleanup for the cleanup sweep's retry and backoff (R-RR-3). Never a destroy or a reuse.
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { retainLeaseOnFailure, type RetainOutcome } from "../../leases/retained-source";
import { recordRunEvent } from "../../records/run-log";
import { failRunInTransaction } from "../../runs/settle-run";
import { openLegacyCopybackRepairAction } from "../../records/actions";

export interface LegacyCopybackFailureInput {
  runId: string;
  /** The run's lease (null when it never got one: the hold still opens, naming none). */
  leaseId: string | null;
  code: string;
  message: string;
  hostWritesStarted: boolean;
}

/** Test seams: a crash injected between the steps of the one transaction. */
export interface LegacyFailureSeams {
  afterRunFailed?: () => void | Promise<void>;
  afterRetention?: () => void | Promise<void>;
}

export type LegacyCopybackFailureOutcome =
  | { kind: "held"; actionId: string; leaseId: string | null; retain: RetainOutcome["kind"] }
  /** The run had already ended (cancelled by Stop meanwhile): nothing written here (see the late path). */
  | { kind: "run_already_finished"; status: string };

export async function recordLegacyCopybackFailure(
  db: PrismaClient,
  input: LegacyCopybackFailureInput,
  seams: LegacyFailureSeams = {},
): Promise<LegacyCopybackFailureOutcome> {
  return withTransaction(db, async (tx): Promise<LegacyCopybackFailureOutcome> => {
    const run = await tx.heartbeatRun.findUniqueOrThrow({ where: { id: input.runId }, select: { id: true, companyId: true, nativeIssueId: true } });
    const failed = await failRunInTransaction(tx, { runId: input.runId, code: input.code, message: input.message });
    if (failed.kind === "already_finished") return { kind: "run_already_finished", status: failed.status };
    await seams.afterRunFailed?.();
    const retained = input.leaseId
      ? await retainLeaseOnFailure(tx, { leaseId: input.leaseId, expectRunId: input.runId, reason: "legacy_copyback_failed" })
      : ({ kind: "nothing_to_retain", status: "missing" } as const);
    await seams.afterRetention?.();
    const lease = retained.kind === "retained" ? retained.record : null;
    const action = await openLegacyCopybackRepairAction(tx, {
      companyId: run.companyId,
      issueId: run.nativeIssueId,
      runId: run.id,
      leaseId: input.leaseId,
      providerLeaseId: lease?.providerLeaseId ?? null,
      pluginId: lease?.pluginId ?? null,
      path: "copyback_failed",
      failureCode: input.code,
      hostWritesStarted: input.hostWritesStarted,
    });
    await recordRunEvent(tx, {
      companyId: run.companyId,
      runId: run.id,
      level: "error",
      code: "legacy.copyback_held",
      message: "The legacy copy-back of the required workspace files failed; the sandbox is stopped and retained for repair (a board operator records it).",
      payload: { actionId: action.actionId, leaseId: input.leaseId, errorCode: input.code, retain: retained.kind, hostWritesStarted: input.hostWritesStarted },
    });
    return { kind: "held", actionId: action.actionId, leaseId: input.leaseId, retain: retained.kind };
  });
}
