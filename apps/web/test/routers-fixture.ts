// A small two-company world for the console procedures' integration tests, plus principals and
// callers for each role. Built straight with Prisma (the procedures under test are not used to
// set up their own preconditions).
import type { PrismaClient } from "@copyback/db/client";
import type { Principal, Role } from "@copyback/core/auth";
import { createCaller } from "~/server/routers/_app";

export type World = Awaited<ReturnType<typeof buildWorld>>;

export function callerFor(db: PrismaClient, principal: Principal) {
  return createCaller({ db, headers: new Headers(), principal });
}

export function boardUser(
  userId: string,
  memberships: Array<{ companyId: string; role: Role; status?: "active" | "suspended" }>,
  isInstanceAdmin = false,
): Principal {
  return {
    kind: "board_user",
    userId,
    isInstanceAdmin,
    via: "session",
    memberships: memberships.map((m) => ({
      companyId: m.companyId,
      role: m.role,
      status: m.status ?? "active",
    })),
  };
}

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;

export async function buildWorld(db: PrismaClient) {
  const tag = unique();
  const user = (name: string) =>
    db.user.create({
      data: { name, email: `${name.toLowerCase().replace(/\s+/g, ".")}.${tag}@test.example` },
    });
  const [
    ownerUser,
    secondOwnerUser,
    adminUser,
    managerUser,
    memberUser,
    suspendedUser,
    otherOwnerUser,
  ] = await Promise.all([
    user("Olive Owner"),
    user("Oscar Owner"),
    user("Ada Admin"),
    user("Rita Runtime"),
    user("Mel Member"),
    user("Sam Suspended"),
    user("Gus Globex"),
  ]);

  const companyA = await db.company.create({
    data: { name: `Acme ${tag}`, issuePrefix: "ACME", issueCounter: 0 },
  });
  const companyB = await db.company.create({
    data: { name: `Globex ${tag}`, issuePrefix: "GLX", issueCounter: 0 },
  });

  const membership = (
    companyId: string,
    userId: string,
    role: Role,
    status: "active" | "suspended" = "active",
  ) => db.companyMembership.create({ data: { companyId, userId, role, status } });
  const m = {
    owner: await membership(companyA.id, ownerUser.id, "owner"),
    admin: await membership(companyA.id, adminUser.id, "admin"),
    manager: await membership(companyA.id, managerUser.id, "runtime_manager"),
    member: await membership(companyA.id, memberUser.id, "member"),
    suspended: await membership(companyA.id, suspendedUser.id, "member", "suspended"),
    secondOwner: await membership(companyA.id, secondOwnerUser.id, "owner", "suspended"),
    otherOwner: await membership(companyB.id, otherOwnerUser.id, "owner"),
  };

  const agentA = await db.agent.create({
    data: { companyId: companyA.id, name: "Builder", command: ["/bin/true"] },
  });
  const agentB = await db.agent.create({
    data: { companyId: companyB.id, name: "Globex Bot", command: ["/bin/true"] },
  });

  // Issues of A: one per status, last activity one minute apart (newest = index 0), the first
  // three assigned to Builder.
  const base = Date.UTC(2026, 10, 1, 12, 0, 0);
  const statuses = [
    "in_progress",
    "todo",
    "blocked",
    "done",
    "backlog",
    "in_review",
    "todo",
  ] as const;
  const issuesA = [];
  for (const [index, status] of statuses.entries()) {
    issuesA.push(
      await db.issue.create({
        data: {
          companyId: companyA.id,
          number: index + 1,
          identifier: `ACME-${index + 1}`,
          title: `Task ${index + 1}`,
          description: `Description ${index + 1}`,
          status,
          statusVersion: 1,
          assigneeAgentId: index < 3 ? agentA.id : null,
          createdByUserId: ownerUser.id,
          lastActivityAt: new Date(base - index * 60_000),
        },
      }),
    );
  }
  const issueB = await db.issue.create({
    data: {
      companyId: companyB.id,
      number: 1,
      identifier: "GLX-1",
      title: "Globex secret plan",
      status: "todo",
      assigneeAgentId: agentB.id,
      lastActivityAt: new Date(base),
    },
  });
  const issueA = issuesA[0]!;

  await db.issueMessage.createMany({
    data: [
      {
        companyId: companyA.id,
        issueId: issueA.id,
        authorType: "user",
        authorUserId: ownerUser.id,
        body: "Please start",
        createdAt: new Date(base - 3000),
      },
      {
        companyId: companyA.id,
        issueId: issueA.id,
        authorType: "agent",
        authorAgentId: agentA.id,
        body: "On it",
        createdAt: new Date(base - 2000),
      },
      {
        companyId: companyA.id,
        issueId: issueA.id,
        authorType: "system",
        body: "Run started",
        createdAt: new Date(base - 1000),
      },
    ],
  });

  const runA = await db.heartbeatRun.create({
    data: {
      companyId: companyA.id,
      agentId: agentA.id,
      nativeIssueId: issueA.id,
      runtimeMode: "native",
      status: "succeeded",
      nativePhase: "committed",
      controllerPid: 4242,
      controllerHost: "secret-host",
      startedAt: new Date(base - 120_000),
      finishedAt: new Date(base - 60_000),
    },
  });
  // A second run without any finalization rows (the empty states).
  const bareRunA = await db.heartbeatRun.create({
    data: {
      companyId: companyA.id,
      agentId: agentA.id,
      nativeIssueId: issueA.id,
      runtimeMode: "legacy",
      status: "queued",
    },
  });
  await db.runEvent.createMany({
    data: [
      {
        companyId: companyA.id,
        runId: runA.id,
        level: "info",
        code: "run.started",
        message: "Run started",
        createdAt: new Date(base - 120_000),
      },
      {
        companyId: companyA.id,
        runId: runA.id,
        level: "info",
        code: "run.finished",
        message: "Run finished",
        createdAt: new Date(base - 60_000),
      },
    ],
  });
  await db.nativeRunFinalization.create({
    data: {
      companyId: companyA.id,
      runId: runA.id,
      issueId: issueA.id,
      phase: "committed",
      attempt: 2,
      failureCode: "export_timeout",
      committedAt: new Date(base - 60_000),
    },
  });
  await db.workspaceOperation.create({
    data: {
      companyId: companyA.id,
      runId: runA.id,
      issueId: issueA.id,
      phase: "workspace_finalize",
      status: "succeeded",
      startedAt: new Date(base - 90_000),
      finishedAt: new Date(base - 61_000),
    },
  });
  const runB = await db.heartbeatRun.create({
    data: {
      companyId: companyB.id,
      agentId: agentB.id,
      nativeIssueId: issueB.id,
      status: "running",
      startedAt: new Date(base),
    },
  });

  const principals = {
    owner: boardUser(ownerUser.id, [{ companyId: companyA.id, role: "owner" }]),
    admin: boardUser(adminUser.id, [{ companyId: companyA.id, role: "admin" }]),
    manager: boardUser(managerUser.id, [{ companyId: companyA.id, role: "runtime_manager" }]),
    member: boardUser(memberUser.id, [{ companyId: companyA.id, role: "member" }]),
    suspended: boardUser(suspendedUser.id, [
      { companyId: companyA.id, role: "member", status: "suspended" },
    ]),
    otherOwner: boardUser(otherOwnerUser.id, [{ companyId: companyB.id, role: "owner" }]),
    instanceAdmin: boardUser(adminUser.id, [], true),
    localBoard: { kind: "local_board" } as Principal,
    agent: {
      kind: "agent",
      agentId: agentA.id,
      companyId: companyA.id,
      keyId: "00000000-0000-4000-8000-000000000000",
    } as Principal,
  };

  return {
    companyA,
    companyB,
    users: {
      ownerUser,
      secondOwnerUser,
      adminUser,
      managerUser,
      memberUser,
      suspendedUser,
      otherOwnerUser,
    },
    memberships: m,
    agentA,
    agentB,
    issuesA,
    issueA,
    issueB,
    runA,
    bareRunA,
    runB,
    principals,
  };
}

/** The tRPC error code and domain code of a rejected call (fails the test if it resolved). */
export async function rejection(
  promise: Promise<unknown>,
): Promise<{ code: string; domainCode: string | null; message: string }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: string; message: string; cause?: { code?: unknown } };
    return {
      code: e.code ?? "UNKNOWN",
      domainCode: typeof e.cause?.code === "string" ? e.cause.code : null,
      message: e.message,
    };
  }
  throw new Error("expected the call to be rejected, but it resolved");
}
