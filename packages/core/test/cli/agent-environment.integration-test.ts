// Issue 21 part 5: `copyback agent list` and `copyback agent set-environment` against a real
// PostgreSQL. Pointing an agent at an environment of its company writes the agent's
// environment_id with an `agent.environment_changed` activity row, and the next run's context
// (dispatch/run-context.ts, what the worker reads at dispatch) takes that environment and its
// plugin; a repeat, an unknown agent or environment, another company's environment or an archived
// agent writes nothing.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { decideRunContext, loadRunContext } from "../../src/dispatch/run-context";
import { parseJson, runCli } from "./helpers";

const db = useTestDatabase();
let dir = "";
let companyId = "";
let agentId = "";
let daytonaId = "";
let localId = "";
let otherEnvId = "";
let archivedId = "";
let runId = "";

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "copyback-cli-agent-env-"));
  const prisma = db.prisma();
  const tag = path.basename(dir);
  companyId = (await prisma.company.create({ data: { name: `CLI agents ${tag}`, issuePrefix: "AGE" } })).id;
  const other = await prisma.company.create({ data: { name: `CLI agents other ${tag}`, issuePrefix: "AGO" } });
  daytonaId = (await prisma.environment.create({ data: { companyId, name: "daytona", provider: "daytona", pluginId: "builtin.daytona" } })).id;
  localId = (await prisma.environment.create({ data: { companyId, name: "local", provider: "local", pluginId: "builtin.local" } })).id;
  otherEnvId = (await prisma.environment.create({ data: { companyId: other.id, name: "theirs", provider: "local", pluginId: "builtin.local" } })).id;
  agentId = (await prisma.agent.create({ data: { companyId, name: "builder", command: ["/bin/true"] } })).id;
  archivedId = (await prisma.agent.create({ data: { companyId, name: "retired", command: ["/bin/true"], archivedAt: new Date() } })).id;
  const workspace = await prisma.executionWorkspace.create({ data: { companyId, name: "ws", hostPath: path.join(dir, "ws") } });
  const issue = await prisma.issue.create({ data: { companyId, number: 1, identifier: "AGE-1", title: "t", status: "in_progress", executionWorkspaceId: workspace.id, assigneeAgentId: agentId } });
  runId = (await prisma.heartbeatRun.create({ data: { companyId, agentId, nativeIssueId: issue.id, status: "running" } })).id;
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const cli = (argv: string[], json = true) => runCli(json ? ["--json", ...argv] : argv, { databaseUrl: db.url(), copybackHome: dir });
const state = async () => ({
  agents: await db.prisma().agent.findMany({ where: { companyId }, orderBy: { name: "asc" }, select: { id: true, environmentId: true } }),
  activity: await db.prisma().activityLog.count({ where: { companyId, action: "agent.environment_changed" } }),
});
type Listed = { agents: { id: string; environment: { id: string } | null; archived: boolean }[] };

describe("copyback agent", () => {
  it("lists the company's agents (by issue prefix) with no environment; the run cannot start: agent_without_environment", async () => {
    const out = parseJson(await cli(["agent", "list", "--company", "AGE"])) as Listed;
    expect(out.agents.map((a) => [a.id, a.environment, a.archived])).toEqual([
      [agentId, null, false],
      [archivedId, null, true],
    ]);
    expect((await cli(["agent", "list", "--company", companyId], false)).stdout).toContain("none: its runs cannot start");
    expect(decideRunContext(await loadRunContext(db.prisma(), runId))).toMatchObject({ kind: "reject", code: "agent_without_environment" });
  });

  it("points the agent at an environment with its activity row; the run's context takes it and its plugin; a repeat changes nothing", async () => {
    const run = await cli(["agent", "set-environment", "--agent", agentId, "--environment", daytonaId]);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(parseJson(run)).toMatchObject({ changed: true, previousEnvironmentId: null, environment: { id: daytonaId, provider: "daytona" } });
    expect((await db.prisma().agent.findUniqueOrThrow({ where: { id: agentId } })).environmentId).toBe(daytonaId);
    const activity = await db.prisma().activityLog.findMany({ where: { companyId, action: "agent.environment_changed" } });
    expect(activity).toHaveLength(1);
    expect(activity[0]).toMatchObject({ actorType: "system", entityType: "agent", entityId: agentId, details: { from: null, to: daytonaId, environmentName: "daytona" } });
    expect(decideRunContext(await loadRunContext(db.prisma(), runId))).toMatchObject({ kind: "ready", context: { environmentId: daytonaId, environmentPluginId: "builtin.daytona" } });

    const before = await state();
    const again = await cli(["agent", "set-environment", "--agent", agentId, "--environment", daytonaId], false);
    expect(again.code).toBe(EXIT.ok);
    expect(again.stdout).toContain("nothing changed");
    expect(await state()).toEqual(before);

    const moved = await cli(["agent", "set-environment", "--agent", agentId, "--environment", localId]);
    expect(parseJson(moved)).toMatchObject({ changed: true, previousEnvironmentId: daytonaId });
    const listed = parseJson(await cli(["agent", "list", "--company", companyId])) as Listed;
    expect(listed.agents.find((a) => a.id === agentId)?.environment?.id).toBe(localId);
  });

  it("refuses an unknown agent or environment, another company's environment, an archived agent and a malformed id, writing nothing", async () => {
    const before = await state();
    const missing = "00000000-0000-4000-8000-000000000000";
    for (const [what, agent, environment, exit, code] of [
      ["unknown agent", missing, daytonaId, EXIT.failed, "agent_not_found"],
      ["unknown environment", agentId, missing, EXIT.failed, "environment_not_found"],
      ["another company's environment", agentId, otherEnvId, EXIT.usage, "environment_of_another_company"],
      ["archived agent", archivedId, daytonaId, EXIT.failed, "agent_archived"],
      ["malformed agent id", "builder", daytonaId, EXIT.usage, "usage"],
    ] as const) {
      const run = await cli(["agent", "set-environment", "--agent", agent, "--environment", environment]);
      expect(run.code, what).toBe(exit);
      expect((parseJson(run) as { error: { code: string } }).error.code, what).toBe(code);
    }
    expect((await cli(["agent", "set-environment", "--agent", agentId])).code).toBe(EXIT.usage);
    expect(await state()).toEqual(before);
  });
});
