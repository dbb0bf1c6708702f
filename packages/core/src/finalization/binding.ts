// checkRunBinding: THE binding check (DESIGN.md section 8). Old work may reach the host and move
// the task only while the task is still bound to that exact run and its accepted result. Every
// recovery path asks this one function (operator attestation now; automatic cloud takeover,
// export-only retry, historical unsafe recovery and reconstruction later):
//   - the task is open (not done / cancelled) and still assigned to the run's agent, R-RW-4;
//   - it is bound to this execution: issues.execution_run_id is the run, and no other run holds
//     its checkout;
//   - the run is a running native run of the task's company;
//   - the coordinator's result is the run's accepted result (same company, issue and run);
//   - no newer execution: no other queued or running run (native or legacy) of the task;
//   - the coordinator is in a phase the caller may resume from.
// loadRunBinding reads the snapshot under short row locks (run -> issue -> coordinator, the lock
// order of publication and failRun); callers never hold them across copyback I/O (R-RW-4).
import type { FinalizationPhase, IssueStatus, RunStatus, RuntimeMode, TransactionClient } from "@copyback/db/client";

export interface BindingSnapshot {
  run: { id: string; companyId: string; issueId: string; agentId: string; status: RunStatus; runtimeMode: RuntimeMode } | null;
  issue: { id: string; companyId: string; status: IssueStatus; assigneeAgentId: string | null; executionRunId: string | null; checkoutRunId: string | null } | null;
  coordinator: { phase: FinalizationPhase; resultId: string | null } | null;
  /** The run's accepted result (native_run_results, schema_status accepted), bound to its company, issue and run. */
  acceptedResultId: string | null;
  /** Other queued or running runs of the task (any runtime mode). */
  otherActiveRunIds: string[];
}

export type BindingRejectCode =
  | "run_not_found"
  | "run_not_native"
  | "run_not_running"
  | "task_closed"
  | "task_reassigned"
  | "newer_execution"
  | "checkout_changed"
  | "newer_run"
  | "result_unbound"
  | "phase_not_resumable";

export type BindingDecision = { kind: "bound"; resultId: string } | { kind: "reject"; code: BindingRejectCode; message: string };

export function checkRunBinding(s: BindingSnapshot, allowedPhases: readonly FinalizationPhase[]): BindingDecision {
  const reject = (code: BindingRejectCode, message: string): BindingDecision => ({ kind: "reject", code, message });
  const { run, issue, coordinator } = s;
  if (!run || !issue || issue.id !== run.issueId || issue.companyId !== run.companyId) return reject("run_not_found", "The run or its task was not found.");
  if (run.runtimeMode !== "native") return reject("run_not_native", "Only native runs finalize through the copyback coordinator.");
  if (run.status !== "running") return reject("run_not_running", `The run is ${run.status}; it no longer owns the task.`);
  if (issue.status === "done" || issue.status === "cancelled") return reject("task_closed", `The task is ${issue.status}.`);
  if (issue.assigneeAgentId !== run.agentId) return reject("task_reassigned", "The task is assigned to another agent now.");
  if (issue.executionRunId !== run.id) return reject("newer_execution", "The task is bound to another execution now.");
  if (issue.checkoutRunId !== null && issue.checkoutRunId !== run.id) return reject("checkout_changed", "Another run holds the task's checkout.");
  if (s.otherActiveRunIds.length > 0) return reject("newer_run", "Another run of the task is queued or running.");
  if (!coordinator || coordinator.resultId === null || s.acceptedResultId === null || coordinator.resultId !== s.acceptedResultId) {
    return reject("result_unbound", "The coordinator is not bound to the run's accepted result.");
  }
  if (!allowedPhases.includes(coordinator.phase)) return reject("phase_not_resumable", `The coordinator is ${coordinator.phase}.`);
  return { kind: "bound", resultId: coordinator.resultId };
}

/** Reads the binding snapshot of a run under row locks (run, issue, coordinator FOR UPDATE). */
export async function loadRunBinding(tx: TransactionClient, key: { companyId: string; runId: string }): Promise<BindingSnapshot> {
  const [runRow] = await tx.$queryRaw<{ id: string; company_id: string; native_issue_id: string; agent_id: string; status: RunStatus; runtime_mode: RuntimeMode }[]>`
    SELECT id, company_id, native_issue_id, agent_id, status, runtime_mode FROM heartbeat_runs
    WHERE id = ${key.runId}::uuid AND company_id = ${key.companyId}::uuid FOR UPDATE`;
  if (!runRow) return { run: null, issue: null, coordinator: null, acceptedResultId: null, otherActiveRunIds: [] };
  const run = { id: runRow.id, companyId: runRow.company_id, issueId: runRow.native_issue_id, agentId: runRow.agent_id, status: runRow.status, runtimeMode: runRow.runtime_mode };
  const [issueRow] = await tx.$queryRaw<{ id: string; company_id: string; status: IssueStatus; assignee_agent_id: string | null; execution_run_id: string | null; checkout_run_id: string | null }[]>`
    SELECT id, company_id, status, assignee_agent_id, execution_run_id, checkout_run_id FROM issues
    WHERE id = ${run.issueId}::uuid AND company_id = ${run.companyId}::uuid FOR UPDATE`;
  const [coordinatorRow] = await tx.$queryRaw<{ phase: FinalizationPhase; result_id: string | null }[]>`
    SELECT phase, result_id FROM native_run_finalizations WHERE run_id = ${run.id}::uuid FOR UPDATE`;
  const accepted = await tx.nativeRunResult.findFirst({
    where: { runId: run.id, companyId: run.companyId, issueId: run.issueId, schemaStatus: "accepted" },
    orderBy: { createdAt: "asc" },
    select: { id: true },
  });
  const others = await tx.heartbeatRun.findMany({
    where: { nativeIssueId: run.issueId, companyId: run.companyId, id: { not: run.id }, status: { in: ["queued", "running"] } },
    select: { id: true },
    take: 20,
  });
  return {
    run,
    issue: issueRow
      ? { id: issueRow.id, companyId: issueRow.company_id, status: issueRow.status, assigneeAgentId: issueRow.assignee_agent_id, executionRunId: issueRow.execution_run_id, checkoutRunId: issueRow.checkout_run_id }
      : null,
    coordinator: coordinatorRow ? { phase: coordinatorRow.phase, resultId: coordinatorRow.result_id } : null,
    acceptedResultId: accepted?.id ?? null,
    otherActiveRunIds: others.map((o) => o.id),
  };
}
