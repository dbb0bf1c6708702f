// A company with an agent that can run (environment), a task with an execution workspace, and
// helpers to queue, claim and read runs; built straight with Prisma so that the services under
// test do not set up their own preconditions.
import { randomUUID } from "node:crypto";
import type { PrismaClient } from "@copyback/db/client";
import type { ProcessIdentity } from "../../src/process/process-identity";
import { claimQueuedRuns } from "../../src/dispatch/claim-runs";
import { RUN_RESULT_SCHEMA } from "../../src/records/result-document";
import { wakeAgent } from "../../src/runs/wake-agent";

export const CONTROLLER: ProcessIdentity = { pid: 4242, startTime: "123456789", bootId: "boot-1", host: "test-host" };
export const USER_ACTOR = (id: string | null = null) => ({ type: "user" as const, id });

export const resultDoc = (outcome: "in_review" | "done" | "blocked" = "in_review", summary = "Did the work.") => ({
  schema: RUN_RESULT_SCHEMA,
  outcome,
  summary,
});

let counter = 0;

export async function buildCompany(db: PrismaClient) {
  const tag = `${Date.now().toString(36)}${(counter++).toString(36)}`;
  const company = await db.company.create({ data: { name: `Acme ${tag}`, issuePrefix: "ACME", issueCounter: 0 } });
  const environment = await db.environment.create({
    data: { companyId: company.id, name: "Local", provider: "local", pluginId: "builtin.local" },
  });
  const workspace = await db.executionWorkspace.create({
    data: { companyId: company.id, name: "main", hostPath: `/tmp/copyback-test-${tag}` },
  });
  const agent = await db.agent.create({
    data: { companyId: company.id, name: "Builder", command: ["/bin/true"], environmentId: environment.id },
  });
  let number = 0;
  const issue = (data: { status?: "backlog" | "todo" | "in_progress" | "done" | "cancelled"; assign?: boolean; workspace?: boolean } = {}) => {
    number += 1;
    return db.issue.create({
      data: {
        companyId: company.id,
        number,
        identifier: `ACME-${number}`,
        title: `Task ${number}`,
        status: data.status ?? "todo",
        assigneeAgentId: data.assign === false ? null : agent.id,
        executionWorkspaceId: data.workspace === false ? null : workspace.id,
      },
    });
  };
  return { company, environment, workspace, agent, issue };
}

export type Company = Awaited<ReturnType<typeof buildCompany>>;

/** A task with a running (claimed) run of the company's agent. */
export async function runningRun(db: PrismaClient, world: Company) {
  const issue = await world.issue();
  const { runId } = await wakeAgent(db, { companyId: world.company.id, issueId: issue.id, actor: USER_ACTOR() });
  // Other queued runs of this database may be claimed too; keep only ours running by claiming
  // with a limit large enough and ignoring the rest (they are started, which is harmless here).
  const claimed = await claimQueuedRuns(db, { limit: 100, controller: CONTROLLER });
  if (!claimed.some((run) => run.runId === runId)) throw new Error("fixture: the run was not claimed");
  return { issue, runId };
}

export const newId = () => randomUUID();
