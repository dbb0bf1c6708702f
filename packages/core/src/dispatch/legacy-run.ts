// The end of a legacy run's turn (runtime_mode = 'legacy', the `legacy` agent adapter): the older
// protocol, without the native coordinator. The controller restores the required workspace files
// itself (legacy-copyback.ts, R-RR-1's retries) and then reports:
//   - copied, the agent exited cleanly: the run succeeds and the outcome its adapter reported (its
//     result file, default in_review) goes to the task through the status arbiter; lease released
//     by policy as committed;
//   - copied, the agent failed: the run fails with the agent's code (its files are on the host);
//   - not copied: the failed run, the lease's retention intent and the board's repair hold in one
//     transaction (R-RR-2), then the lease is stopped and retained with a verified receipt (R-RR-3);
//   - the run was cancelled meanwhile (Stop) and the copy-back failed: the late-report path
//     (R-LG-1), which records a repair hold only for an exactly matching, stopped ephemeral source.
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { arbitrateLegacyOutcome } from "../records/status-arbiter";
import type { CopybackRetryOptions } from "../copyback/merge/retries";
import type { MergeLockProvider } from "../copyback/merge/types";
import type { EnvironmentProvider, ExecResult, LeaseHandle } from "../providers/types";
import { recordLegacyCopybackFailure } from "../recovery/legacy/record-copyback-failure";
import { recordLateLegacyCopybackFailure } from "../recovery/legacy/record-late-copyback-failure";
import { recordActivity, SYSTEM_ACTOR } from "../records/record-activity";
import { runResultDocument, type RunResultOutcome } from "../records/result-document";
import { recordRunEvent } from "../records/run-log";
import { failRun } from "../runs/settle-run";
import { decideAfterAgent } from "./agent-outcome";
import { copyBackLegacyWorkspace, LEGACY_COPYBACK_FAILED_CODE } from "./legacy-copyback";

export interface LegacyTurnDeps {
  db: PrismaClient;
  instanceRoot: string;
  locks: MergeLockProvider;
  retry?: Pick<CopybackRetryOptions, "backoffMs" | "sleep">;
}

export interface LegacyTurnInput {
  companyId: string;
  runId: string;
  issueId: string;
  lease: LeaseHandle;
  plugin: EnvironmentProvider;
  exec: ExecResult;
}

/** What the caller does with the lease afterwards (releaseLeaseByPolicy's outcome, or nothing). */
export type LegacyTurnEnd =
  | { kind: "succeeded"; release: "committed" }
  | { kind: "failed"; release: "failed"; code: string }
  | { kind: "held"; release: "failed"; actionId: string }
  | { kind: "cancelled"; release: "failed"; late: string | null };

export async function finishLegacyTurn(deps: LegacyTurnDeps, input: LegacyTurnInput): Promise<LegacyTurnEnd> {
  const { db } = deps;
  const copied = await copyBackLegacyWorkspace(deps, input);
  const run = await db.heartbeatRun.findUniqueOrThrow({ where: { id: input.runId }, select: { status: true } });

  if (run.status !== "running") {
    // Cancelled (or settled) while the agent worked: a failed copy-back is a late report (R-LG-1).
    if (copied.kind === "copied") return { kind: "cancelled", release: "failed", late: null };
    const late = await recordLateLegacyCopybackFailure(db, { companyId: input.companyId, runId: input.runId, code: copied.code, message: copied.message });
    await recordRunEvent(db, {
      companyId: input.companyId,
      runId: input.runId,
      level: late.kind === "held" ? "error" : "warn",
      code: late.kind === "held" ? "legacy.late_report_recorded" : "legacy.late_report_refused",
      message:
        late.kind === "held"
          ? "The late copy-back failure was recorded: the stopped sandbox is kept for repair."
          : late.kind === "already_recorded"
            ? "The late copy-back failure was already recorded."
            : `The late copy-back failure could not be matched to the run's original sandbox (${late.code}); nothing was adopted.`,
      payload: { outcome: late.kind, ...(late.kind === "rejected" ? { code: late.code, field: late.field ?? null } : {}) },
    });
    return { kind: "cancelled", release: "failed", late: late.kind };
  }

  if (copied.kind === "failed") {
    const held = await recordLegacyCopybackFailure(db, {
      runId: input.runId,
      leaseId: input.lease.leaseId,
      code: LEGACY_COPYBACK_FAILED_CODE,
      message: `${copied.message} The sandbox is stopped and retained for repair.`,
      hostWritesStarted: copied.hostWritesStarted,
    });
    if (held.kind === "held") return { kind: "held", release: "failed", actionId: held.actionId };
    // Cancelled between the copy-back and the write: the late path decides.
    const late = await recordLateLegacyCopybackFailure(db, { companyId: input.companyId, runId: input.runId, code: copied.code, message: copied.message });
    return { kind: "cancelled", release: "failed", late: late.kind };
  }

  const after = decideAfterAgent({
    runStatus: "running",
    acceptedResultId: null,
    exit: { exitCode: input.exec.exitCode, signal: input.exec.signal, timedOut: input.exec.timedOut, cancelled: input.exec.cancelled, resourceLimit: input.exec.resourceLimits?.hit ?? null },
    resultFileNote: null,
  });
  const cleanExit = input.exec.exitCode === 0 && !input.exec.timedOut && !input.exec.cancelled && !input.exec.resourceLimits?.hit;
  if (!cleanExit && after.kind === "fail") {
    await failRun(db, { runId: input.runId, code: after.code, message: after.message.replace(" without submitting a result", "") });
    return { kind: "failed", release: "failed", code: after.code };
  }
  const outcome = legacyOutcome(input.exec.resultFile);
  const completed = await withTransaction(db, async (tx) => {
    await tx.$queryRaw`SELECT id FROM heartbeat_runs WHERE id = ${input.runId}::uuid FOR UPDATE`;
    const updated = await tx.heartbeatRun.updateMany({ where: { id: input.runId, status: "running" }, data: { status: "succeeded", finishedAt: new Date() } });
    if (updated.count !== 1) return false;
    await arbitrateLegacyOutcome(tx, { runId: input.runId, outcome });
    await recordActivity(tx, { companyId: input.companyId, actor: SYSTEM_ACTOR, action: "run.succeeded", entityType: "run", entityId: input.runId, details: { issueId: input.issueId, legacy: true } });
    await recordRunEvent(tx, { companyId: input.companyId, runId: input.runId, level: "info", code: "run.finished", message: `Legacy run succeeded (outcome ${outcome}).`, payload: { outcome } });
    return true;
  });
  return completed ? { kind: "succeeded", release: "committed" } : { kind: "cancelled", release: "failed", late: null };
}

/** The outcome a legacy adapter reported in its result file; without a valid one, the work goes to review. */
export function legacyOutcome(resultFile: string | null): RunResultOutcome {
  if (resultFile === null) return "in_review";
  try {
    const parsed = runResultDocument.safeParse(JSON.parse(resultFile));
    return parsed.success ? parsed.data.outcome : "in_review";
  } catch {
    return "in_review";
  }
}
