// Demo data for a fresh instance: two companies, board users in every role, an agent, a local
// environment, a real workspace directory, tasks in every status with conversations, and their
// activity. Idempotent: the demo company has a fixed id, and a second call changes nothing.
// Users have no credentials: sign-in methods (auth_accounts) are added by the auth layer.
import type { Prisma, PrismaClient } from "../generated/prisma/client";
import type {
  ActorType,
  IssueStatus,
  MembershipRole,
  MembershipStatus,
} from "../generated/prisma/enums";
import { withTransaction, type TransactionClient } from "../client/transactions";
import { ensureDemoWorkspace } from "./demo-workspace";
import { createDemoRun } from "./demo-run";
import { BUILDER_COMMAND, RESEARCHER_COMMAND, upgradeDemoAgentCommand } from "./demo-agent";

/** Fixed ids, so "is the demo there?" never depends on a name a user may have reused. */
export const DEMO_COMPANY_ID = "0a0e0000-0000-4000-8000-00000000ac01";
export const DEMO_SECOND_COMPANY_ID = "0a0e0000-0000-4000-8000-00000000ac02";

/** The local provider's built-in plugin id, pinned on its leases (R-EX-6). */
export const LOCAL_PLUGIN_ID = "builtin.local";

export interface SeedDemoOptions {
  /** The instance root; the demo workspace is created under `<instanceRoot>/workspaces/`. */
  instanceRoot: string;
  /**
   * The seeding instance's host id (issue 23; core's resolveHostId for this instance root, the
   * one the worker resolves too). The demo workspace lies under this instance's root, so it is
   * this host's by construction and is created bound to it: left unbound, a worker of another host
   * sharing the database could claim its first run and bind it there, where the directory is not.
   * Absent (tests, the db package's own seed command, which cannot resolve it): created unbound.
   * A demo seeded before is left as it is.
   */
  hostId?: string;
}

interface DemoUser {
  key: string;
  name: string;
  email: string;
  isInstanceAdmin?: boolean;
}

const USERS: readonly DemoUser[] = [
  { key: "ada", name: "Ada Lovelace", email: "ada@acme.test" },
  { key: "grace", name: "Grace Hopper", email: "grace@acme.test" },
  { key: "linus", name: "Linus Torvalds", email: "linus@acme.test" },
  { key: "margaret", name: "Margaret Hamilton", email: "margaret@acme.test" },
  { key: "ken", name: "Ken Thompson", email: "ken@acme.test" },
  { key: "barbara", name: "Barbara Liskov", email: "barbara@copyback.test", isInstanceAdmin: true },
  { key: "hank", name: "Hank Scorpio", email: "hank@globex.test" },
];

const ACME_MEMBERSHIPS: ReadonlyArray<{
  user: string;
  role: MembershipRole;
  status: MembershipStatus;
}> = [
  { user: "ada", role: "owner", status: "active" },
  { user: "grace", role: "admin", status: "active" },
  { user: "linus", role: "runtime_manager", status: "active" },
  { user: "margaret", role: "member", status: "active" },
  { user: "ken", role: "member", status: "suspended" },
];

// Barbara is an instance administrator without any membership: her access comes from the flag.
const GLOBEX_MEMBERSHIPS: ReadonlyArray<{
  user: string;
  role: MembershipRole;
  status: MembershipStatus;
}> = [
  { user: "hank", role: "owner", status: "active" },
  { user: "ada", role: "member", status: "active" },
];

interface DemoMessage {
  from: string; // a user key, or "agent" for Builder, or "system"
  body: string;
}

interface DemoIssue {
  title: string;
  description: string;
  status: IssueStatus;
  assignToAgent: boolean;
  createdBy: string;
  minutesAgo: number;
  messages: DemoMessage[];
  /** Adds one finished run of the demo agent (with its run log) before the agent's reply. */
  finishedRun?: true;
}

const ACME_ISSUES: readonly DemoIssue[] = [
  {
    title: "Write the project README",
    description: "Explain what the motor controller service does and how to run it locally.",
    status: "done",
    assignToAgent: true,
    createdBy: "ada",
    minutesAgo: 60 * 24 * 3,
    finishedRun: true,
    messages: [
      { from: "ada", body: "Please start with a short overview and a quickstart." },
      { from: "agent", body: "README.md now has an overview and a quickstart section." },
      { from: "grace", body: "Looks good, closing." },
    ],
  },
  {
    title: "Add a health check endpoint",
    description: "GET /healthz returns 200 with the build version once the controller is ready.",
    status: "in_progress",
    assignToAgent: true,
    createdBy: "grace",
    minutesAgo: 25,
    messages: [
      { from: "grace", body: "The load balancer needs this before Friday." },
      { from: "agent", body: "Working on it: adding the route in src/index.ts." },
    ],
  },
  {
    title: "Draft release notes for 0.2",
    description: "Summarise the changes since 0.1 for the customer newsletter.",
    status: "in_review",
    assignToAgent: true,
    createdBy: "margaret",
    minutesAgo: 90,
    messages: [
      { from: "margaret", body: "Keep it under one page." },
      { from: "agent", body: "Draft is in docs/release-0.2.md, ready for review." },
    ],
  },
  {
    title: "Investigate the flaky sensor calibration test",
    description: "calibration.spec fails about one run in twenty on CI.",
    status: "blocked",
    assignToAgent: false,
    createdBy: "linus",
    minutesAgo: 60 * 5,
    messages: [
      { from: "linus", body: "Blocked until the hardware lab gives us the new fixtures." },
      { from: "ada", body: "I asked the lab; expected next week." },
    ],
  },
  {
    title: "Document the motor controller API",
    description: "Every public function of src/index.ts, with an example each.",
    status: "todo",
    assignToAgent: true,
    createdBy: "ada",
    minutesAgo: 60 * 8,
    messages: [{ from: "ada", body: "Put it in docs/motor-controller.md." }],
  },
  {
    title: "Move CI to the new runners",
    description: "The old runners are retired at the end of the quarter.",
    status: "backlog",
    assignToAgent: false,
    createdBy: "grace",
    minutesAgo: 60 * 24,
    messages: [{ from: "grace", body: "Not urgent; parking it in the backlog." }],
  },
  {
    title: "Evaluate a second gripper vendor",
    description: "Compare price and lead times with our current supplier.",
    status: "cancelled",
    assignToAgent: false,
    createdBy: "margaret",
    minutesAgo: 60 * 24 * 7,
    messages: [
      { from: "margaret", body: "Is this still needed?" },
      { from: "ada", body: "No, the contract was renewed. Cancelling." },
    ],
  },
];

const GLOBEX_ISSUES: readonly DemoIssue[] = [
  {
    title: "Plan the quarterly roadmap",
    description: "Collect proposals from every team.",
    status: "todo",
    assignToAgent: false,
    createdBy: "hank",
    minutesAgo: 120,
    messages: [{ from: "hank", body: "Proposals due by Monday." }],
  },
];

export async function seedDemo(
  prisma: PrismaClient,
  options: SeedDemoOptions,
): Promise<{ companyId: string; created: boolean }> {
  const hostPath = await ensureDemoWorkspace(options.instanceRoot, "acme-main");
  if (await prisma.company.findUnique({ where: { id: DEMO_COMPANY_ID }, select: { id: true } })) {
    await upgradeDemoAgentCommand(prisma, DEMO_COMPANY_ID);
    return { companyId: DEMO_COMPANY_ID, created: false };
  }
  try {
    await withTransaction(prisma, (tx) => insertDemo(tx, hostPath, options.hostId ?? null), {
      timeoutMs: 60_000,
      maxWaitMs: 10_000,
    });
  } catch (error) {
    // A concurrent seed inserted the same fixed id first: that seed's data stands.
    if (
      isUniqueViolation(error) &&
      (await prisma.company.findUnique({ where: { id: DEMO_COMPANY_ID }, select: { id: true } }))
    ) {
      return { companyId: DEMO_COMPANY_ID, created: false };
    }
    throw error;
  }
  return { companyId: DEMO_COMPANY_ID, created: true };
}

function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002"
  );
}

// Rows nothing else refers to (activity, messages) are collected and written with one
// createMany each at the end: fewer round trips inside the transaction.
class Batches {
  readonly activity: Prisma.ActivityLogCreateManyInput[] = [];
  readonly messages: Prisma.IssueMessageCreateManyInput[] = [];

  log(entry: Prisma.ActivityLogCreateManyInput & { details: Record<string, string> }): void {
    this.activity.push(entry);
  }
}

async function insertDemo(tx: TransactionClient, hostPath: string, hostId: string | null): Promise<void> {
  const now = Date.now();
  const batches = new Batches();
  const users = new Map<string, string>();
  for (const user of USERS) {
    // A user may already exist (signed up before seeding): reuse it, change nothing about it.
    const row = await tx.user.upsert({
      where: { email: user.email },
      update: {},
      create: {
        name: user.name,
        email: user.email,
        emailVerified: true,
        isInstanceAdmin: user.isInstanceAdmin ?? false,
      },
      select: { id: true },
    });
    users.set(user.key, row.id);
  }
  const userId = (key: string): string => {
    const id = users.get(key);
    if (!id) throw new Error(`seed: unknown demo user ${key}`);
    return id;
  };

  // --- Acme Robotics -------------------------------------------------------------------
  const acme = await tx.company.create({
    data: { id: DEMO_COMPANY_ID, name: "Acme Robotics", issuePrefix: "ACME" },
  });
  batches.log({
    companyId: acme.id,
    actorType: "system",
    action: "company.created",
    entityType: "company",
    entityId: acme.id,
    details: { name: acme.name },
  });
  await addMembers(tx, batches, acme.id, ACME_MEMBERSHIPS, userId, userId("ada"));
  const environment = await tx.environment.create({
    data: {
      companyId: acme.id,
      name: "Local sandbox",
      provider: "local",
      pluginId: LOCAL_PLUGIN_ID,
      config: { allowNetwork: false },
      defaultLeasePolicy: "ephemeral",
    },
  });
  const workspace = await tx.executionWorkspace.create({
    data: {
      companyId: acme.id,
      name: "acme-main",
      hostPath,
      hostId,
      excludedPaths: ["node_modules", ".git"],
    },
  });
  // Grace created both demo agents on the local environment: Builder (seconds of work) and the
  // slow Researcher, for rehearsing Stop and a killed worker while an agent works (demo-agent.ts).
  const createAgent = async (name: string, command: readonly string[]) => {
    const agent = await tx.agent.create({
      data: { companyId: acme.id, name, command: [...command], adapterConfig: { timeoutSeconds: 600 }, environmentId: environment.id },
    });
    batches.log({
      companyId: acme.id,
      actorType: "user",
      actorId: userId("grace"),
      action: "agent.created",
      entityType: "agent",
      entityId: agent.id,
      details: { name: agent.name },
    });
    return agent;
  };
  const builder = await createAgent("Builder", BUILDER_COMMAND);
  await createAgent("Researcher", RESEARCHER_COMMAND);
  await createIssues(tx, batches, {
    companyId: acme.id,
    prefix: "ACME",
    issues: ACME_ISSUES,
    agentId: builder.id,
    workspaceId: workspace.id,
    userId,
    now,
  });

  // --- Globex (a second tenant, so cross-company views and scoping have something to show) --
  const globex = await tx.company.create({
    data: { id: DEMO_SECOND_COMPANY_ID, name: "Globex", issuePrefix: "GLX" },
  });
  batches.log({
    companyId: globex.id,
    actorType: "system",
    action: "company.created",
    entityType: "company",
    entityId: globex.id,
    details: { name: globex.name },
  });
  await addMembers(tx, batches, globex.id, GLOBEX_MEMBERSHIPS, userId, userId("hank"));
  await createIssues(tx, batches, {
    companyId: globex.id,
    prefix: "GLX",
    issues: GLOBEX_ISSUES,
    agentId: null,
    workspaceId: null,
    userId,
    now,
  });

  await tx.issueMessage.createMany({ data: batches.messages });
  await tx.activityLog.createMany({ data: batches.activity });
}

async function addMembers(
  tx: TransactionClient,
  batches: Batches,
  companyId: string,
  memberships: ReadonlyArray<{ user: string; role: MembershipRole; status: MembershipStatus }>,
  userId: (key: string) => string,
  addedBy: string,
): Promise<void> {
  for (const membership of memberships) {
    const row = await tx.companyMembership.create({
      data: {
        companyId,
        userId: userId(membership.user),
        role: membership.role,
        status: membership.status,
      },
    });
    batches.log({
      companyId,
      actorType: "user",
      actorId: addedBy,
      action: "membership.created",
      entityType: "company_membership",
      entityId: row.id,
      details: { role: membership.role, status: membership.status },
    });
  }
}

interface CreateIssuesInput {
  companyId: string;
  prefix: string;
  issues: readonly DemoIssue[];
  agentId: string | null;
  workspaceId: string | null;
  userId: (key: string) => string;
  now: number;
}

async function createIssues(
  tx: TransactionClient,
  batches: Batches,
  input: CreateIssuesInput,
): Promise<void> {
  let number = 0;
  for (const issue of input.issues) {
    number += 1;
    const lastActivityAt = new Date(input.now - issue.minutesAgo * 60_000);
    const createdAt = new Date(lastActivityAt.getTime() - 30 * 60_000);
    const creator = input.userId(issue.createdBy);
    const row = await tx.issue.create({
      data: {
        companyId: input.companyId,
        number,
        identifier: `${input.prefix}-${number}`,
        title: issue.title,
        description: issue.description,
        status: issue.status,
        statusVersion: issue.status === "backlog" ? 0 : 1,
        assigneeAgentId: issue.assignToAgent ? input.agentId : null,
        executionWorkspaceId: input.workspaceId,
        createdByUserId: creator,
        lastActivityAt,
        createdAt,
      },
    });
    const entity = {
      companyId: input.companyId,
      actorType: "user",
      actorId: creator,
      entityType: "issue",
      entityId: row.id,
    } as const;
    batches.log({
      ...entity,
      action: "issue.created",
      details: { identifier: row.identifier },
      createdAt,
    });
    if (issue.status !== "backlog") {
      batches.log({
        ...entity,
        action: "issue.status_changed",
        details: { from: "backlog", to: issue.status },
        createdAt: lastActivityAt,
      });
    }
    if (issue.finishedRun && input.agentId) {
      // Between the first message (+1 min) and the agent's reply (+2 min).
      await createDemoRun(tx, {
        companyId: input.companyId,
        issueId: row.id,
        agentId: input.agentId,
        startedAt: new Date(createdAt.getTime() + 70_000),
      });
    }
    let at = createdAt.getTime();
    for (const message of issue.messages) {
      at += 60_000;
      batches.messages.push({
        companyId: input.companyId,
        issueId: row.id,
        body: message.body,
        createdAt: new Date(at),
        ...messageAuthor(message.from, input),
      });
    }
  }
  await tx.company.update({ where: { id: input.companyId }, data: { issueCounter: number } });
}

function messageAuthor(
  from: string,
  input: CreateIssuesInput,
): { authorType: ActorType; authorUserId?: string; authorAgentId?: string } {
  if (from === "system") return { authorType: "system" };
  if (from === "agent") {
    if (!input.agentId)
      throw new Error("seed: an agent message in a company without the demo agent");
    return { authorType: "agent", authorAgentId: input.agentId };
  }
  return { authorType: "user", authorUserId: input.userId(from) };
}
