// wakeAgent / assignAgent against a real PostgreSQL: refusals change nothing, a wake is
// idempotent while a run is queued or running, activity is written with the change.
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { assignAgent, wakeAgent } from "../../src/runs/wake-agent";
import { buildCompany, USER_ACTOR, type Company } from "./runs-fixture";

const db = useTestDatabase();
let world: Company;
let other: Company;

beforeAll(async () => {
  world = await buildCompany(db.prisma());
  other = await buildCompany(db.prisma());
});

const snapshot = async (issueId: string) => ({
  runs: await db.prisma().heartbeatRun.count({ where: { nativeIssueId: issueId } }),
  activity: await db.prisma().activityLog.count({ where: { companyId: world.company.id } }),
  issue: await db.prisma().issue.findUniqueOrThrow({ where: { id: issueId }, select: { assigneeAgentId: true, status: true } }),
});

describe("wakeAgent", () => {
  it("queues one native run with its wake reason and writes run.queued activity and a run event", async () => {
    const issue = await world.issue();
    const woke = await wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, actor: USER_ACTOR(), reason: "manual" });
    expect(woke.created).toBe(true);
    const run = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: woke.runId } });
    expect(run).toMatchObject({ runtimeMode: "native", status: "queued", wakeReason: "manual", agentId: world.agent.id, nativeIssueId: issue.id, companyId: world.company.id });
    const activity = await db.prisma().activityLog.findMany({ where: { entityId: woke.runId } });
    expect(activity.map((a) => [a.action, a.actorType])).toEqual([["run.queued", "user"]]);
    expect(await db.prisma().runEvent.count({ where: { runId: woke.runId, code: "run.queued" } })).toBe(1);
  });

  it("is idempotent: a task with a queued (or running) run returns it, created false; concurrent wakes create one run", async () => {
    const issue = await world.issue();
    const results = await Promise.all(
      [1, 2, 3].map(() => wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, actor: USER_ACTOR() })),
    );
    expect(new Set(results.map((r) => r.runId)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    await db.prisma().heartbeatRun.update({ where: { id: results[0]!.runId }, data: { status: "running" } });
    expect(await wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, actor: USER_ACTOR() })).toEqual({ runId: results[0]!.runId, created: false });
  });

  it("assigns the given agent first (issue.assigned then run.queued, in one transaction)", async () => {
    const issue = await world.issue({ assign: false });
    const woke = await wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, agentId: world.agent.id, actor: USER_ACTOR() });
    expect(woke.created).toBe(true);
    expect((await snapshot(issue.id)).issue.assigneeAgentId).toBe(world.agent.id);
    const actions = await db.prisma().activityLog.findMany({ where: { companyId: world.company.id, OR: [{ entityId: issue.id }, { entityId: woke.runId }] }, orderBy: { createdAt: "asc" } });
    expect(actions.map((a) => a.action)).toEqual(["issue.assigned", "run.queued"]);
    expect((await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: woke.runId } })).wakeReason).toBe("issue_assigned");
  });

  it.each([
    ["a done task", { status: "done" as const }, "issue_closed"],
    ["a cancelled task", { status: "cancelled" as const }, "issue_closed"],
    ["a task without an execution workspace", { workspace: false }, "issue_without_workspace"],
    ["an unassigned task", { assign: false }, "issue_unassigned"],
  ])("refuses %s with %s and changes nothing", async (_, shape, code) => {
    const issue = await world.issue(shape);
    const before = await snapshot(issue.id);
    await expect(wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, actor: USER_ACTOR() })).rejects.toMatchObject({ kind: "conflict", code });
    expect(await snapshot(issue.id)).toEqual(before);
  });

  it("refuses an agent without an environment (agent_without_environment) and rolls back the assignment", async () => {
    const homeless = await db.prisma().agent.create({ data: { companyId: world.company.id, name: "Homeless", command: ["/bin/true"] } });
    const issue = await world.issue({ assign: false });
    const before = await snapshot(issue.id);
    await expect(wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, agentId: homeless.id, actor: USER_ACTOR() })).rejects.toMatchObject({ code: "agent_without_environment" });
    expect(await snapshot(issue.id)).toEqual(before);
  });

  it("refuses an archived agent (agent_archived) and another company's agent or issue (not_found)", async () => {
    const archived = await db.prisma().agent.create({ data: { companyId: world.company.id, name: "Old", command: ["/bin/true"], environmentId: world.environment.id, archivedAt: new Date() } });
    const issue = await world.issue({ assign: false });
    const before = await snapshot(issue.id);
    await expect(wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, agentId: archived.id, actor: USER_ACTOR() })).rejects.toMatchObject({ code: "agent_archived" });
    await expect(wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, agentId: other.agent.id, actor: USER_ACTOR() })).rejects.toMatchObject({ kind: "not_found" });
    const foreignIssue = await other.issue();
    await expect(wakeAgent(db.prisma(), { companyId: world.company.id, issueId: foreignIssue.id, actor: USER_ACTOR() })).rejects.toMatchObject({ kind: "not_found" });
    expect(await snapshot(issue.id)).toEqual(before);
    expect(await db.prisma().heartbeatRun.count({ where: { nativeIssueId: foreignIssue.id } })).toBe(0);
  });
});

describe("assignAgent", () => {
  it("assigns, is a no-op when unchanged, unassigns; activity issue.assigned each change", async () => {
    const issue = await world.issue({ assign: false });
    expect(await assignAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, agentId: world.agent.id, actor: USER_ACTOR() })).toEqual({ assigneeAgentId: world.agent.id, changed: true });
    expect(await assignAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, agentId: world.agent.id, actor: USER_ACTOR() })).toEqual({ assigneeAgentId: world.agent.id, changed: false });
    expect(await assignAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, agentId: null, actor: { type: "local_board", id: null } })).toEqual({ assigneeAgentId: null, changed: true });
    const rows = await db.prisma().activityLog.findMany({ where: { entityId: issue.id, action: "issue.assigned" }, orderBy: { createdAt: "asc" } });
    expect(rows.map((r) => r.details)).toEqual([{ from: null, to: world.agent.id }, { from: world.agent.id, to: null }]);
  });

  it("refuses to swap agents under a queued run (issue_run_active)", async () => {
    const second = await db.prisma().agent.create({ data: { companyId: world.company.id, name: "Second", command: ["/bin/true"], environmentId: world.environment.id } });
    const issue = await world.issue();
    await wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, actor: USER_ACTOR() });
    await expect(assignAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, agentId: second.id, actor: USER_ACTOR() })).rejects.toMatchObject({ code: "issue_run_active" });
    expect((await snapshot(issue.id)).issue.assigneeAgentId).toBe(world.agent.id);
  });
});
