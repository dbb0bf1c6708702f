// The status arbiter: THE one function that moves a task's status from a run's end (DESIGN.md
// section 3). It loads the snapshot under the issue's row lock, asks the pure policy
// (status-policy.ts) and writes the verdict in the caller's transaction. Either way the run's
// checkout of the task ends and the task's activity clock moves.
import type { IssueStatus, TransactionClient } from "@copyback/db/client";
import { conflict, notFound } from "../errors";
import { recordActivity, SYSTEM_ACTOR, type Actor } from "./record-activity";
import { runResultDocument } from "./result-document";
import { readNativeClaim } from "./run-json";
import { recordRunEvent } from "./run-log";
import { decideIssueStatus, type NotAppliedReason, type RunOutcome } from "./status-policy";

export type ArbiterOutcome =
  | { kind: "applied"; issueId: string; from: IssueStatus; to: IssueStatus; statusVersion: number }
  | { kind: "not_applied"; issueId: string; status: IssueStatus; reason: NotAppliedReason };

/** Applies an accepted result's outcome to the run's task (after the copyback barrier). */
export async function arbitrateRunResult(
  tx: TransactionClient,
  input: { runId: string; resultId: string },
): Promise<ArbiterOutcome> {
  const run = await loadRun(tx, input.runId);
  const result = await tx.nativeRunResult.findFirst({
    where: { id: input.resultId, runId: run.id, companyId: run.companyId },
    select: { id: true, schemaStatus: true, payload: true },
  });
  if (!result) throw notFound("Result");
  const document = runResultDocument.safeParse(result.payload);
  // Only an accepted, well-formed result may move a task; a rejected one never grants anything.
  if (result.schemaStatus !== "accepted" || !document.success) {
    throw conflict("result_not_accepted", "Only an accepted result can be applied to the task.", {
      resultId: result.id,
    });
  }
  return arbitrate(tx, run, document.data.outcome, { type: "agent", id: run.agentId }, { resultId: result.id });
}

/** A run that ended without a committed result: the task goes to `blocked` if the run still owns it. */
export async function arbitrateRunFailure(
  tx: TransactionClient,
  input: { runId: string; code: string },
): Promise<ArbiterOutcome> {
  const run = await loadRun(tx, input.runId);
  // The system, not the agent, decided this status: the agent submitted nothing that says so.
  return arbitrate(tx, run, "failed", SYSTEM_ACTOR, { errorCode: input.code });
}

/**
 * A legacy run's end after its own copy-back restored the workspace (dispatch/legacy-run.ts): the
 * outcome its adapter reported (its result file, validated), through the same rules as a native
 * result. Legacy runs have no coordinator and no stored native result.
 */
export async function arbitrateLegacyOutcome(
  tx: TransactionClient,
  input: { runId: string; outcome: RunOutcome },
): Promise<ArbiterOutcome> {
  const run = await loadRun(tx, input.runId);
  return arbitrate(tx, run, input.outcome, { type: "agent", id: run.agentId }, {});
}

interface RunRow {
  id: string;
  companyId: string;
  agentId: string;
  nativeIssueId: string;
  runnerProfileJson: unknown;
}

async function loadRun(tx: TransactionClient, runId: string): Promise<RunRow> {
  const run = await tx.heartbeatRun.findUnique({
    where: { id: runId },
    select: { id: true, companyId: true, agentId: true, nativeIssueId: true, runnerProfileJson: true },
  });
  if (!run) throw notFound("Run");
  return run;
}

async function arbitrate(
  tx: TransactionClient,
  run: RunRow,
  outcome: RunOutcome,
  actor: Actor,
  details: { resultId?: string; errorCode?: string },
): Promise<ArbiterOutcome> {
  // The issue row lock serializes the arbiter with claims, wakes and people moving the task.
  await tx.$queryRaw`SELECT id FROM issues WHERE id = ${run.nativeIssueId}::uuid AND company_id = ${run.companyId}::uuid FOR UPDATE`;
  const issue = await tx.issue.findFirst({
    where: { id: run.nativeIssueId, companyId: run.companyId },
    select: { id: true, status: true, statusVersion: true, executionRunId: true, checkoutRunId: true },
  });
  if (!issue) throw notFound("Issue");
  const claim = readNativeClaim(run.runnerProfileJson);
  const decision = decideIssueStatus({
    runId: run.id,
    outcome,
    issue,
    claimedStatusVersion: claim && claim.issueId === issue.id ? claim.statusVersion : null,
  });

  const now = new Date();
  // The run's checkout ends either way; another run's checkout is not ours to clear.
  const checkout = issue.checkoutRunId === run.id ? { checkoutRunId: null } : {};
  const changes = decision.kind === "apply" && decision.to !== decision.from;
  const updated = await tx.issue.updateMany({
    where: { id: issue.id, statusVersion: issue.statusVersion },
    data: changes
      ? { ...checkout, status: decision.to, statusVersion: { increment: 1 }, lastActivityAt: now }
      : { ...checkout, lastActivityAt: now },
  });
  if (updated.count !== 1) throw new Error("status arbiter: the locked issue changed under its row lock");

  const common = { runId: run.id, outcome, ...details };
  if (decision.kind === "keep") {
    await recordActivity(tx, {
      companyId: run.companyId,
      actor: SYSTEM_ACTOR,
      action: "run.result_not_applied",
      entityType: "run",
      entityId: run.id,
      details: { ...common, issueId: issue.id, status: issue.status, reason: decision.reason },
    });
    await recordRunEvent(tx, {
      companyId: run.companyId,
      runId: run.id,
      level: "warn",
      code: "issue.status_not_applied",
      message: `The task keeps its status ${issue.status} (${decision.reason}).`,
      payload: { issueId: issue.id, reason: decision.reason, outcome },
    });
    return { kind: "not_applied", issueId: issue.id, status: issue.status, reason: decision.reason };
  }
  if (changes) {
    await recordActivity(tx, {
      companyId: run.companyId,
      actor,
      action: "issue.status_changed",
      entityType: "issue",
      entityId: issue.id,
      details: { ...common, from: decision.from, to: decision.to },
    });
    await recordRunEvent(tx, {
      companyId: run.companyId,
      runId: run.id,
      level: "info",
      code: "issue.status_applied",
      message: `The task moved from ${decision.from} to ${decision.to}.`,
      payload: { issueId: issue.id, from: decision.from, to: decision.to },
    });
  }
  return {
    kind: "applied",
    issueId: issue.id,
    from: decision.from,
    to: decision.to,
    statusVersion: changes ? issue.statusVersion + 1 : issue.statusVersion,
  };
}
