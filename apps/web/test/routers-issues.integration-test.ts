// issues.* procedures against a real database: the board list (filters, keyset pages), the task
// view, posting messages and moving status with optimistic concurrency, and company scoping.
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { buildWorld, callerFor, rejection, type World } from "./routers-fixture";

const database = useTestDatabase();
let w: World;
const db = () => database.prisma();

beforeAll(async () => {
  w = await buildWorld(db());
});

describe("issues.list", () => {
  it("lists the company's issues, newest activity first, with the recovery slot empty", async () => {
    const page = await callerFor(db(), w.principals.member).issues.list({
      companyId: w.companyA.id,
    });
    expect(page.items.map((i) => i.identifier)).toEqual([
      "ACME-1",
      "ACME-2",
      "ACME-3",
      "ACME-4",
      "ACME-5",
      "ACME-6",
      "ACME-7",
    ]);
    expect(page.nextCursor).toBeNull();
    expect(page.items[0]).toMatchObject({
      status: "in_progress",
      assignee: { id: w.agentA.id, name: "Builder" },
      recovery: null,
    });
    expect(page.items.some((i) => i.identifier.startsWith("GLX"))).toBe(false);
  });

  it("filters by status and by assignee in the database", async () => {
    const caller = callerFor(db(), w.principals.member);
    const todo = await caller.issues.list({ companyId: w.companyA.id, status: ["todo"] });
    expect(todo.items.map((i) => i.identifier)).toEqual(["ACME-2", "ACME-7"]);
    const two = await caller.issues.list({ companyId: w.companyA.id, status: ["todo", "blocked"] });
    expect(two.items.map((i) => i.identifier)).toEqual(["ACME-2", "ACME-3", "ACME-7"]);
    const builder = await caller.issues.list({ companyId: w.companyA.id, assignee: w.agentA.id });
    expect(builder.items.map((i) => i.identifier)).toEqual(["ACME-1", "ACME-2", "ACME-3"]);
    const unassigned = await caller.issues.list({
      companyId: w.companyA.id,
      assignee: "unassigned",
      status: ["todo"],
    });
    expect(unassigned.items.map((i) => i.identifier)).toEqual(["ACME-7"]);
    const otherAgent = await caller.issues.list({
      companyId: w.companyA.id,
      assignee: w.agentB.id,
    });
    expect(otherAgent.items).toEqual([]);
  });

  it("pages with keyset cursors: every issue exactly once, ties on the timestamp broken by id", async () => {
    // Five issues sharing one last-activity timestamp (ties are where naive cursors lose rows).
    const tie = new Date(Date.UTC(2026, 9, 1));
    for (let n = 100; n < 105; n++) {
      await db().issue.create({
        data: {
          companyId: w.companyA.id,
          number: n,
          identifier: `ACME-${n}`,
          title: `Tie ${n}`,
          status: "backlog",
          lastActivityAt: tie,
        },
      });
    }
    const caller = callerFor(db(), w.principals.member);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await caller.issues.list({
        companyId: w.companyA.id,
        limit: 3,
        ...(cursor ? { cursor } : {}),
      });
      seen.push(...page.items.map((i) => i.identifier));
      cursor = page.nextCursor ?? undefined;
      pages += 1;
    } while (cursor && pages < 10);
    const all = await caller.issues.list({ companyId: w.companyA.id, limit: 200 });
    expect(seen).toEqual(all.items.map((i) => i.identifier));
    expect(new Set(seen).size).toBe(12);
    expect(pages).toBe(4);
  });

  it("refuses a malformed cursor or filter with BAD_REQUEST", async () => {
    const caller = callerFor(db(), w.principals.member);
    expect(
      (await rejection(caller.issues.list({ companyId: w.companyA.id, cursor: "not-a-cursor" })))
        .code,
    ).toBe("BAD_REQUEST");
    expect(
      (
        await rejection(
          caller.issues.list({ companyId: w.companyA.id, status: ["nope" as "todo"] }),
        )
      ).code,
    ).toBe("BAD_REQUEST");
    expect(
      (await rejection(caller.issues.list({ companyId: w.companyA.id, assignee: "someone" }))).code,
    ).toBe("BAD_REQUEST");
  });

  it("reads another company as NOT_FOUND and refuses anonymous and suspended principals", async () => {
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.otherOwner).issues.list({ companyId: w.companyA.id }),
        )
      ).code,
    ).toBe("NOT_FOUND");
    expect(
      (
        await rejection(
          callerFor(db(), { kind: "anonymous" }).issues.list({ companyId: w.companyA.id }),
        )
      ).code,
    ).toBe("UNAUTHORIZED");
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.suspended).issues.list({ companyId: w.companyA.id }),
        )
      ).code,
    ).toBe("FORBIDDEN");
  });
});

describe("issues.get and issues.messages", () => {
  it("returns the task with its assignee and the conversation with author names, oldest first", async () => {
    const caller = callerFor(db(), w.principals.member);
    const issue = await caller.issues.get({ companyId: w.companyA.id, issueId: w.issueA.id });
    expect(issue).toMatchObject({
      identifier: "ACME-1",
      title: "Task 1",
      description: "Description 1",
      status: "in_progress",
      assignee: { name: "Builder" },
      createdBy: { name: "Olive Owner" },
    });
    const { messages, truncated } = await caller.issues.messages({
      companyId: w.companyA.id,
      issueId: w.issueA.id,
    });
    expect(truncated).toBe(false);
    expect(messages.map((m) => [m.author.type, m.author.name, m.body])).toEqual([
      ["user", "Olive Owner", "Please start"],
      ["agent", "Builder", "On it"],
      ["system", "Copyback", "Run started"],
    ]);
  });

  it("reads another company's issue id as NOT_FOUND, under either company id", async () => {
    const caller = callerFor(db(), w.principals.owner);
    expect(
      (await rejection(caller.issues.get({ companyId: w.companyA.id, issueId: w.issueB.id }))).code,
    ).toBe("NOT_FOUND");
    expect(
      (await rejection(caller.issues.messages({ companyId: w.companyA.id, issueId: w.issueB.id })))
        .code,
    ).toBe("NOT_FOUND");
    expect(
      (await rejection(caller.issues.get({ companyId: w.companyB.id, issueId: w.issueB.id }))).code,
    ).toBe("NOT_FOUND");
  });
});

describe("issues.addMessage", () => {
  it("posts as the signed-in user, bumps last activity and writes the audit row in the same transaction", async () => {
    const caller = callerFor(db(), w.principals.member);
    const before = await db().issue.findUniqueOrThrow({ where: { id: w.issueA.id } });
    const posted = await caller.issues.addMessage({
      companyId: w.companyA.id,
      issueId: w.issueA.id,
      body: "  Looks good to me  ",
    });
    const message = await db().issueMessage.findUniqueOrThrow({ where: { id: posted.id } });
    expect(message).toMatchObject({
      companyId: w.companyA.id,
      authorType: "user",
      authorUserId: w.users.memberUser.id,
      body: "Looks good to me",
    });
    const after = await db().issue.findUniqueOrThrow({ where: { id: w.issueA.id } });
    expect(after.lastActivityAt.getTime()).toBeGreaterThan(before.lastActivityAt.getTime());
    const audit = await db().activityLog.findFirstOrThrow({
      where: { action: "issue.message_posted", entityId: w.issueA.id },
      orderBy: { createdAt: "desc" },
    });
    expect(audit).toMatchObject({
      companyId: w.companyA.id,
      actorType: "user",
      actorId: w.users.memberUser.id,
      details: { messageId: posted.id },
    });
  });

  it("records the trusted local board as the author in local mode", async () => {
    const posted = await callerFor(db(), w.principals.localBoard).issues.addMessage({
      companyId: w.companyA.id,
      issueId: w.issueA.id,
      body: "From the local board",
    });
    const message = await db().issueMessage.findUniqueOrThrow({ where: { id: posted.id } });
    expect(message).toMatchObject({
      authorType: "local_board",
      authorUserId: null,
      authorAgentId: null,
    });
    const { messages } = await callerFor(db(), w.principals.member).issues.messages({
      companyId: w.companyA.id,
      issueId: w.issueA.id,
    });
    expect(messages.at(-1)?.author).toEqual({ type: "local_board", name: "Local board" });
  });

  it("refuses bad input, another company's issue and read-only principals, changing nothing", async () => {
    const counts = async () => [await db().issueMessage.count(), await db().activityLog.count()];
    const before = await counts();
    const member = callerFor(db(), w.principals.member);
    expect(
      (
        await rejection(
          member.issues.addMessage({ companyId: w.companyA.id, issueId: w.issueA.id, body: "   " }),
        )
      ).code,
    ).toBe("BAD_REQUEST");
    expect(
      (
        await rejection(
          member.issues.addMessage({
            companyId: w.companyA.id,
            issueId: w.issueA.id,
            body: "x".repeat(20_001),
          }),
        )
      ).code,
    ).toBe("BAD_REQUEST");
    expect(
      (
        await rejection(
          member.issues.addMessage({ companyId: w.companyA.id, issueId: "not-a-uuid", body: "hi" }),
        )
      ).code,
    ).toBe("BAD_REQUEST");
    expect(
      (
        await rejection(
          member.issues.addMessage({ companyId: w.companyA.id, issueId: w.issueB.id, body: "hi" }),
        )
      ).code,
    ).toBe("NOT_FOUND");
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.otherOwner).issues.addMessage({
            companyId: w.companyA.id,
            issueId: w.issueA.id,
            body: "hi",
          }),
        )
      ).code,
    ).toBe("NOT_FOUND");
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.suspended).issues.addMessage({
            companyId: w.companyA.id,
            issueId: w.issueA.id,
            body: "hi",
          }),
        )
      ).code,
    ).toBe("FORBIDDEN");
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.agent).issues.addMessage({
            companyId: w.companyA.id,
            issueId: w.issueA.id,
            body: "hi",
          }),
        )
      ).code,
    ).toBe("FORBIDDEN");
    expect(await counts()).toEqual(before);
  });
});

describe("issues.updateStatus", () => {
  it("moves the status, increments status_version and writes the audit row", async () => {
    const issue = w.issuesA[1]!; // ACME-2, todo, version 1
    const result = await callerFor(db(), w.principals.member).issues.updateStatus({
      companyId: w.companyA.id,
      issueId: issue.id,
      status: "in_progress",
      expectedStatusVersion: 1,
    });
    expect(result).toEqual({ status: "in_progress", statusVersion: 2 });
    const row = await db().issue.findUniqueOrThrow({ where: { id: issue.id } });
    expect(row).toMatchObject({ status: "in_progress", statusVersion: 2 });
    const audit = await db().activityLog.findFirstOrThrow({
      where: { action: "issue.status_changed", entityId: issue.id },
    });
    expect(audit).toMatchObject({
      actorType: "user",
      actorId: w.users.memberUser.id,
      details: { from: "todo", to: "in_progress" },
    });
  });

  it("answers a stale status_version with CONFLICT stale_status_version and changes nothing", async () => {
    const issue = w.issuesA[2]!; // ACME-3, blocked, version 1
    const audits = await db().activityLog.count();
    const error = await rejection(
      callerFor(db(), w.principals.member).issues.updateStatus({
        companyId: w.companyA.id,
        issueId: issue.id,
        status: "done",
        expectedStatusVersion: 0,
      }),
    );
    expect(error).toMatchObject({ code: "CONFLICT", domainCode: "stale_status_version" });
    expect(await db().issue.findUniqueOrThrow({ where: { id: issue.id } })).toMatchObject({
      status: "blocked",
      statusVersion: 1,
    });
    expect(await db().activityLog.count()).toBe(audits);
  });

  it("lets exactly one of two concurrent moves from the same version win", async () => {
    const issue = w.issuesA[3]!; // ACME-4, done, version 1
    const caller = callerFor(db(), w.principals.member);
    const results = await Promise.allSettled([
      caller.issues.updateStatus({
        companyId: w.companyA.id,
        issueId: issue.id,
        status: "todo",
        expectedStatusVersion: 1,
      }),
      caller.issues.updateStatus({
        companyId: w.companyA.id,
        issueId: issue.id,
        status: "blocked",
        expectedStatusVersion: 1,
      }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const loser = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(loser.reason).toMatchObject({ code: "CONFLICT" });
    expect((loser.reason as { cause: { code: string } }).cause.code).toBe("stale_status_version");
    const row = await db().issue.findUniqueOrThrow({ where: { id: issue.id } });
    expect(row.statusVersion).toBe(2);
    expect(
      await db().activityLog.count({
        where: { action: "issue.status_changed", entityId: issue.id },
      }),
    ).toBe(1);
  });

  it("refuses an unknown status, another company's issue and read-only principals, changing nothing", async () => {
    const issue = w.issuesA[4]!; // ACME-5, backlog
    const member = callerFor(db(), w.principals.member);
    expect(
      (
        await rejection(
          member.issues.updateStatus({
            companyId: w.companyA.id,
            issueId: issue.id,
            status: "archived" as "todo",
            expectedStatusVersion: 1,
          }),
        )
      ).code,
    ).toBe("BAD_REQUEST");
    expect(
      (
        await rejection(
          member.issues.updateStatus({
            companyId: w.companyA.id,
            issueId: issue.id,
            status: "todo",
            expectedStatusVersion: -1,
          }),
        )
      ).code,
    ).toBe("BAD_REQUEST");
    expect(
      (
        await rejection(
          member.issues.updateStatus({
            companyId: w.companyA.id,
            issueId: w.issueB.id,
            status: "done",
            expectedStatusVersion: 0,
          }),
        )
      ).code,
    ).toBe("NOT_FOUND");
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.suspended).issues.updateStatus({
            companyId: w.companyA.id,
            issueId: issue.id,
            status: "todo",
            expectedStatusVersion: 1,
          }),
        )
      ).code,
    ).toBe("FORBIDDEN");
    expect(await db().issue.findUniqueOrThrow({ where: { id: issue.id } })).toMatchObject({
      status: "backlog",
      statusVersion: 1,
    });
    expect(await db().issue.findUniqueOrThrow({ where: { id: w.issueB.id } })).toMatchObject({
      status: "todo",
      statusVersion: 0,
    });
  });
});

describe("companies and agents", () => {
  it("companies.list shows only visible companies; companies.get reports the caller's permissions", async () => {
    const mine = await callerFor(db(), w.principals.member).companies.list();
    expect(mine.map((c) => c.id)).toEqual([w.companyA.id]);
    const all = await callerFor(db(), w.principals.localBoard).companies.list();
    expect(all.map((c) => c.id)).toEqual(expect.arrayContaining([w.companyA.id, w.companyB.id]));

    const asMember = await callerFor(db(), w.principals.member).companies.get({
      companyId: w.companyA.id,
    });
    expect(asMember.name).toBe(w.companyA.name);
    expect(asMember.permissions).toContain("issues:write");
    expect(asMember.permissions).not.toContain("members:manage");
    expect(asMember.permissions).not.toContain("runtime:manage");
    const asOwner = await callerFor(db(), w.principals.owner).companies.get({
      companyId: w.companyA.id,
    });
    expect(asOwner.permissions).toEqual(
      expect.arrayContaining(["members:manage", "runtime:manage", "api_keys:manage"]),
    );
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.otherOwner).companies.get({ companyId: w.companyA.id }),
        )
      ).code,
    ).toBe("NOT_FOUND");
  });

  it("agents.list lists the company's agents only", async () => {
    const agents = await callerFor(db(), w.principals.member).agents.list({
      companyId: w.companyA.id,
    });
    expect(agents).toEqual([{ id: w.agentA.id, name: "Builder", archived: false }]);
  });
});
