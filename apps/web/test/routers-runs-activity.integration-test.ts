// runs.* and activity.list against a real database: run inspection data, the operator-only
// finalization details, the activity log's pages, and company scoping.
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { buildWorld, callerFor, rejection, type World } from "./routers-fixture";

const database = useTestDatabase();
let w: World;
const db = () => database.prisma();

beforeAll(async () => {
  w = await buildWorld(db());
});

describe("runs.listForIssue and runs.get", () => {
  it("lists the issue's runs newest first", async () => {
    const { runs, truncated } = await callerFor(db(), w.principals.member).runs.listForIssue({
      companyId: w.companyA.id,
      issueId: w.issueA.id,
    });
    expect(truncated).toBe(false);
    expect(runs.map((r) => r.id).sort()).toEqual([w.runA.id, w.bareRunA.id].sort());
    expect(runs.find((r) => r.id === w.runA.id)).toMatchObject({
      status: "succeeded",
      runtimeMode: "native",
      agent: { name: "Builder" },
    });
  });

  it("returns the run's status, mode, phase, timestamps, agent, issue and log, and no controller details", async () => {
    const run = await callerFor(db(), w.principals.member).runs.get({
      companyId: w.companyA.id,
      runId: w.runA.id,
    });
    expect(run).toMatchObject({
      status: "succeeded",
      runtimeMode: "native",
      nativePhase: "committed",
      agent: { id: w.agentA.id, name: "Builder" },
      issue: { id: w.issueA.id, identifier: "ACME-1" },
      startedAt: w.runA.startedAt,
      finishedAt: w.runA.finishedAt,
    });
    expect(run.events.map((e) => e.code)).toEqual(["run.started", "run.finished"]);
    // R-UI-1: no process identifiers reach board users.
    const text = JSON.stringify(run);
    expect(text).not.toContain("4242");
    expect(text).not.toContain("secret-host");
  });

  it("reads another company's run or issue as NOT_FOUND", async () => {
    const owner = callerFor(db(), w.principals.owner);
    expect(
      (await rejection(owner.runs.get({ companyId: w.companyA.id, runId: w.runB.id }))).code,
    ).toBe("NOT_FOUND");
    expect(
      (await rejection(owner.runs.listForIssue({ companyId: w.companyA.id, issueId: w.issueB.id })))
        .code,
    ).toBe("NOT_FOUND");
    expect(
      (await rejection(owner.runs.finalization({ companyId: w.companyA.id, runId: w.runB.id })))
        .code,
    ).toBe("NOT_FOUND");
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.otherOwner).runs.get({
            companyId: w.companyA.id,
            runId: w.runA.id,
          }),
        )
      ).code,
    ).toBe("NOT_FOUND");
    expect(
      (await rejection(owner.runs.get({ companyId: w.companyA.id, runId: "nope" }))).code,
    ).toBe("BAD_REQUEST");
  });
});

describe("runs.finalization", () => {
  it("gives runtime operators the coordinator and workspace operations", async () => {
    const details = await callerFor(db(), w.principals.manager).runs.finalization({
      companyId: w.companyA.id,
      runId: w.runA.id,
    });
    expect(details.coordinator).toMatchObject({
      phase: "committed",
      attempt: 2,
      failureCode: "export_timeout",
    });
    expect(details.workspaceOperations).toEqual([
      expect.objectContaining({
        phase: "workspace_finalize",
        status: "succeeded",
        errorCode: null,
      }),
    ]);
  });

  it("has empty states for a run without finalization rows", async () => {
    const details = await callerFor(db(), w.principals.owner).runs.finalization({
      companyId: w.companyA.id,
      runId: w.bareRunA.id,
    });
    expect(details).toEqual({ coordinator: null, workspaceOperations: [], attempts: [], leases: [] });
  });

  it("R-UI-3: refuses principals without runtime:manage", async () => {
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.member).runs.finalization({
            companyId: w.companyA.id,
            runId: w.runA.id,
          }),
        )
      ).code,
    ).toBe("FORBIDDEN");
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.agent).runs.finalization({
            companyId: w.companyA.id,
            runId: w.runA.id,
          }),
        )
      ).code,
    ).toBe("FORBIDDEN");
    expect(
      await callerFor(db(), w.principals.localBoard).runs.finalization({
        companyId: w.companyA.id,
        runId: w.runA.id,
      }),
    ).toMatchObject({ coordinator: { phase: "committed" } });
  });
});

describe("activity.list", () => {
  it("pages the company's audit trail newest first, naming actors and issues", async () => {
    // Writes through the procedures, so actors and entities are real.
    await callerFor(db(), w.principals.member).issues.addMessage({
      companyId: w.companyA.id,
      issueId: w.issueA.id,
      body: "one",
    });
    await callerFor(db(), w.principals.localBoard).issues.updateStatus({
      companyId: w.companyA.id,
      issueId: w.issueA.id,
      status: "in_review",
      expectedStatusVersion: 1,
    });
    for (let i = 0; i < 5; i++) {
      await db().activityLog.create({
        data: {
          companyId: w.companyA.id,
          actorType: "system",
          action: "test.tick",
          entityType: "company",
          entityId: w.companyA.id,
          createdAt: new Date(Date.UTC(2026, 0, 1)),
        },
      });
    }
    await db().activityLog.create({
      data: {
        companyId: w.companyB.id,
        actorType: "system",
        action: "test.other_company",
        entityType: "company",
        entityId: w.companyB.id,
      },
    });

    const caller = callerFor(db(), w.principals.member);
    const first = await caller.activity.list({ companyId: w.companyA.id, limit: 2 });
    expect(first.items.map((i) => [i.action, i.actor.name, i.issue?.identifier])).toEqual([
      ["issue.status_changed", "Local board", "ACME-1"],
      ["issue.message_posted", "Mel Member", "ACME-1"],
    ]);
    expect(first.items[0]!.details).toEqual({ from: "in_progress", to: "in_review" });

    const seen = [...first.items.map((i) => i.id)];
    let cursor = first.nextCursor;
    while (cursor) {
      const page = await caller.activity.list({ companyId: w.companyA.id, limit: 2, cursor });
      seen.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor;
    }
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
  });

  it("R-RC-3 names the task of a row about a recovery action by the issueId in its details, within the company only", async () => {
    for (const [action, issueId] of [
      ["recovery.reconstruction_recorded", w.issueA.id],
      ["recovery.reconstruction_delivered", w.issueB.id],
      ["recovery.reconstruction_withdrawn", "not-a-uuid"],
    ] as const) {
      await db().activityLog.create({
        data: { companyId: w.companyA.id, actorType: "system", action, entityType: "issue_recovery_action", entityId: w.companyA.id, details: { issueId }, createdAt: new Date(Date.UTC(2030, 0, 1)) },
      });
    }
    const { items } = await callerFor(db(), w.principals.member).activity.list({ companyId: w.companyA.id, limit: 3 });
    const byAction = Object.fromEntries(items.map((i) => [i.action, i.issue?.identifier ?? null]));
    // Another company's issue id in the details names nothing (the lookup is scoped to the viewer's company).
    expect(byAction).toEqual({ "recovery.reconstruction_recorded": "ACME-1", "recovery.reconstruction_delivered": null, "recovery.reconstruction_withdrawn": null });
  });

  it("reads another company as NOT_FOUND and refuses a malformed cursor", async () => {
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.otherOwner).activity.list({ companyId: w.companyA.id }),
        )
      ).code,
    ).toBe("NOT_FOUND");
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.member).activity.list({
            companyId: w.companyA.id,
            cursor: "%%%",
          }),
        )
      ).code,
    ).toBe("BAD_REQUEST");
  });
});
