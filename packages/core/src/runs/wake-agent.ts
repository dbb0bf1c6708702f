// Assigning an agent to a task and waking it: a wake creates one queued native run for the
// task's assignee. The issue row lock serializes concurrent wakes, so a task has at most one
// queued or running run and a repeated wake returns it. Activity is written in the same
// transaction (pg_notify triggers announce the rows to live consoles).
import type { Issue, Prisma, PrismaClient, TransactionClient } from "@copyback/db/client";
import { withTransaction } from "@copyback/db/client";
import { runtimeModeOfAdapter } from "../records/adapter-config";
import { conflict, notFound } from "../errors";
import { recordActivity, type Actor } from "../records/record-activity";
import { findOpenHold, holdRefusal } from "./recovery-hold";
import { recordRunEvent } from "../records/run-log";

export interface AssignAgentInput {
  companyId: string;
  issueId: string;
  /** null unassigns. */
  agentId: string | null;
  actor: Actor;
}

export interface WakeAgentInput {
  companyId: string;
  issueId: string;
  /** Assigns this agent first when given. */
  agentId?: string;
  actor: Actor;
  /** Stored as heartbeat_runs.wake_reason; defaults by how the wake came about. */
  reason?: string;
  /** The run this one follows (Retry: the failed run it re-wakes after). */
  predecessorRunId?: string;
  /** A further check under the task's row lock, after the hold check (Retry: the run is still the task's latest). */
  admit?: (tx: TransactionClient, issue: Issue) => Promise<void>;
  /** Keys the new run's runner_profile_json starts with (a reconstruction's authority, R-RC-5). */
  runnerProfile?: Record<string, unknown>;
}

export interface AssignOutcome {
  assigneeAgentId: string | null;
  changed: boolean;
}

const ACTIVE_RUN_STATUSES = ["queued", "running"] as const;

export function assignAgent(db: PrismaClient, input: AssignAgentInput): Promise<AssignOutcome> {
  return withTransaction(db, async (tx) => {
    const issue = await lockIssue(tx, input.companyId, input.issueId);
    return assignInTransaction(tx, issue, input.agentId, input.actor);
  });
}

export function wakeAgent(db: PrismaClient, input: WakeAgentInput): Promise<{ runId: string; created: boolean }> {
  return withTransaction(db, (tx) => wakeInTransaction(tx, input));
}

/** The wake inside the caller's transaction (a reconstruction's delivery creates its run with its other writes, R-RC-5). */
export async function wakeInTransaction(tx: TransactionClient, input: WakeAgentInput): Promise<{ runId: string; created: boolean }> {
  let issue = await lockIssue(tx, input.companyId, input.issueId);
  if (input.agentId !== undefined) {
    await assignInTransaction(tx, issue, input.agentId, input.actor);
    issue = await lockIssue(tx, input.companyId, input.issueId);
  }
  // R-ORP-3, R-RR-7: an open recovery hold keeps the task's saved work for its own recovery;
  // a wake cannot start (or pretend to resume) work past it. Refused with the reason.
  const hold = await findOpenHold(tx, input.companyId, issue.id);
  if (hold) throw holdRefusal(hold, "The agent cannot be woken");
  await input.admit?.(tx, issue);
  const active = await activeRun(tx, issue.id);
  if (active) return { runId: active.id, created: false };

  if (issue.status === "done" || issue.status === "cancelled") {
    throw conflict("issue_closed", `The task is ${issue.status}; reopen it before waking an agent.`);
  }
  if (!issue.assigneeAgentId) throw conflict("issue_unassigned", "Assign an agent to the task before waking it.");
  const agent = await requireUsableAgent(tx, input.companyId, issue.assigneeAgentId);
  if (!agent.environmentId) {
    throw conflict("agent_without_environment", "The agent has no environment to run in.");
  }
  if (!issue.executionWorkspaceId) {
    throw conflict("issue_without_workspace", "The task has no execution workspace for the run's files.");
  }

  const run = await tx.heartbeatRun.create({
    data: {
      companyId: input.companyId,
      agentId: agent.id,
      nativeIssueId: issue.id,
      // A `legacy` adapter's runs copy back by the older protocol (dispatch/legacy-copyback.ts).
      runtimeMode: runtimeModeOfAdapter(agent.adapterConfig),
      status: "queued",
      wakeReason: input.reason ?? (input.agentId !== undefined ? "issue_assigned" : "manual_wake"),
      ...(input.predecessorRunId ? { predecessorRunId: input.predecessorRunId } : {}),
      ...(input.runnerProfile ? { runnerProfileJson: input.runnerProfile as Prisma.InputJsonObject } : {}),
    },
    select: { id: true, wakeReason: true },
  });
  await tx.issue.update({ where: { id: issue.id }, data: { lastActivityAt: new Date() } });
  await recordActivity(tx, {
    companyId: input.companyId,
    actor: input.actor,
    action: "run.queued",
    entityType: "run",
    entityId: run.id,
    details: { issueId: issue.id, agentId: agent.id, wakeReason: run.wakeReason },
  });
  await recordRunEvent(tx, {
    companyId: input.companyId,
    runId: run.id,
    level: "info",
    code: "run.queued",
    message: `Run queued for ${agent.name} (${run.wakeReason}).`,
  });
  return { runId: run.id, created: true };
}

async function assignInTransaction(
  tx: TransactionClient,
  issue: Issue,
  agentId: string | null,
  actor: Actor,
): Promise<AssignOutcome> {
  if (agentId !== null) await requireUsableAgent(tx, issue.companyId, agentId);
  if (issue.assigneeAgentId === agentId) return { assigneeAgentId: agentId, changed: false };
  // The queued or running run belongs to the current assignee; swapping agents under it would
  // leave a run working for a task that no longer names its agent.
  const active = await activeRun(tx, issue.id);
  if (active) {
    throw conflict("issue_run_active", "The task has a queued or running run; wait for it to end before reassigning.", {
      runId: active.id,
    });
  }
  await tx.issue.update({
    where: { id: issue.id },
    data: { assigneeAgentId: agentId, lastActivityAt: new Date() },
  });
  await recordActivity(tx, {
    companyId: issue.companyId,
    actor,
    action: "issue.assigned",
    entityType: "issue",
    entityId: issue.id,
    details: { from: issue.assigneeAgentId, to: agentId },
  });
  return { assigneeAgentId: agentId, changed: true };
}

async function lockIssue(tx: TransactionClient, companyId: string, issueId: string): Promise<Issue> {
  await tx.$queryRaw`SELECT id FROM issues WHERE id = ${issueId}::uuid AND company_id = ${companyId}::uuid FOR UPDATE`;
  const issue = await tx.issue.findFirst({ where: { id: issueId, companyId } });
  if (!issue) throw notFound("Issue");
  return issue;
}

/** An agent of this company that is not archived; another company's agent does not exist here. */
async function requireUsableAgent(tx: TransactionClient, companyId: string, agentId: string) {
  const agent = await tx.agent.findFirst({
    where: { id: agentId, companyId },
    select: { id: true, name: true, environmentId: true, archivedAt: true, adapterConfig: true },
  });
  if (!agent) throw notFound("Agent");
  if (agent.archivedAt) throw conflict("agent_archived", "The agent is archived.");
  return agent;
}

function activeRun(tx: TransactionClient, issueId: string) {
  return tx.heartbeatRun.findFirst({
    where: { nativeIssueId: issueId, status: { in: [...ACTIVE_RUN_STATUSES] } },
    orderBy: { createdAt: "asc" },
    select: { id: true },
  });
}
