// The console's agent and run procedures against a real database and real files: assigning and
// waking an agent (issues.assignAgent, issues.wake), the issue page's agent panel
// (runs.latestForIssue), the run page's workspace listing (runs.workspace) and the operator's
// lease and change counts (runs.finalization).
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { recordFinalizeChanges } from "@copyback/core/finalization";
import { isolationReport, writeIsolationReport } from "@copyback/core/providers";
import { buildWorld, callerFor, rejection, type World } from "./routers-fixture";

const database = useTestDatabase();
const db = () => database.prisma();
let w: World;
let dir: string;
let hostPath: string;
let runner: { id: string };
let workspaceId: string;
let number = 500;

beforeAll(async () => {
  w = await buildWorld(db());
  dir = await mkdtemp(path.join(os.tmpdir(), "copyback-web-runs-"));
  hostPath = path.join(dir, "acme-main");
  await mkdir(path.join(hostPath, "notes"), { recursive: true });
  await writeFile(path.join(hostPath, "notes", "builder.log"), "Built by Builder\n");
  await writeFile(path.join(hostPath, "README.md"), "# Acme\n");
  await mkdir(path.join(hostPath, "node_modules", "left-pad"), { recursive: true });
  await writeFile(path.join(hostPath, "node_modules", "left-pad", "index.js"), "");
  await mkdir(path.join(dir, "outside"));
  await writeFile(path.join(dir, "outside", "host-secret.txt"), "secret");
  await symlink(path.join(dir, "outside"), path.join(hostPath, "escape"));

  const environment = await db().environment.create({
    data: { companyId: w.companyA.id, name: "Local sandbox", provider: "local", pluginId: "builtin.local" },
  });
  runner = await db().agent.create({
    data: { companyId: w.companyA.id, name: "Runner", command: ["/bin/true"], environmentId: environment.id },
  });
  workspaceId = (
    await db().executionWorkspace.create({
      data: { companyId: w.companyA.id, name: "acme-main", hostPath, excludedPaths: ["node_modules"] },
    })
  ).id;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function task(status: "todo" | "in_review" | "done" | "cancelled" = "todo", assigned = false) {
  const n = ++number;
  return db().issue.create({
    data: {
      companyId: w.companyA.id,
      number: n,
      identifier: `ACME-${n}`,
      title: `Agent task ${n}`,
      status,
      executionWorkspaceId: workspaceId,
      ...(assigned ? { assigneeAgentId: runner.id } : {}),
    },
  });
}

describe("issues.assignAgent", () => {
  it("assigns an agent of the company and unassigns it, each with an activity row", async () => {
    const issue = await task();
    const member = callerFor(db(), w.principals.member);
    const assigned = await member.issues.assignAgent({ companyId: w.companyA.id, issueId: issue.id, agentId: runner.id });
    expect(assigned).toEqual({ assignee: { id: runner.id, name: "Runner" } });
    expect((await db().issue.findUniqueOrThrow({ where: { id: issue.id } })).assigneeAgentId).toBe(runner.id);

    expect(await member.issues.assignAgent({ companyId: w.companyA.id, issueId: issue.id, agentId: null })).toEqual({ assignee: null });
    expect((await db().issue.findUniqueOrThrow({ where: { id: issue.id } })).assigneeAgentId).toBeNull();
    const actions = await db().activityLog.findMany({ where: { entityId: issue.id }, select: { action: true, actorId: true } });
    expect(actions.length).toBeGreaterThanOrEqual(2);
    expect(actions.every((a) => a.actorId === w.users.memberUser.id)).toBe(true);
  });

  it("reads another company's agent as not found and leaves the task as it was", async () => {
    const issue = await task();
    const error = await rejection(
      callerFor(db(), w.principals.owner).issues.assignAgent({ companyId: w.companyA.id, issueId: issue.id, agentId: w.agentB.id }),
    );
    expect(error.code).toBe("NOT_FOUND");
    expect((await db().issue.findUniqueOrThrow({ where: { id: issue.id } })).assigneeAgentId).toBeNull();
  });

  it("refuses a malformed agent id before anything runs", async () => {
    const issue = await task();
    const error = await rejection(
      callerFor(db(), w.principals.owner).issues.assignAgent({ companyId: w.companyA.id, issueId: issue.id, agentId: "builder" }),
    );
    expect(error.code).toBe("BAD_REQUEST");
  });
});

describe("issues.wake", () => {
  it("queues one native run of the assignee, and a second wake returns the same run", async () => {
    const issue = await task("todo", true);
    const member = callerFor(db(), w.principals.member);
    const first = await member.issues.wake({ companyId: w.companyA.id, issueId: issue.id });
    expect(first.created).toBe(true);
    const run = await db().heartbeatRun.findUniqueOrThrow({ where: { id: first.runId } });
    expect(run).toMatchObject({ status: "queued", runtimeMode: "native", agentId: runner.id, nativeIssueId: issue.id });

    expect(await member.issues.wake({ companyId: w.companyA.id, issueId: issue.id })).toEqual({ runId: first.runId, created: false });
    expect(await db().heartbeatRun.count({ where: { nativeIssueId: issue.id } })).toBe(1);
  });

  it("assigns the given agent and wakes it in one call", async () => {
    const issue = await task();
    const woken = await callerFor(db(), w.principals.localBoard).issues.wake({ companyId: w.companyA.id, issueId: issue.id, agentId: runner.id });
    expect(woken.created).toBe(true);
    expect((await db().issue.findUniqueOrThrow({ where: { id: issue.id } })).assigneeAgentId).toBe(runner.id);
  });

  it("refuses a done or cancelled task (CONFLICT issue_closed) and queues nothing", async () => {
    for (const status of ["done", "cancelled"] as const) {
      const issue = await task(status, true);
      const error = await rejection(callerFor(db(), w.principals.owner).issues.wake({ companyId: w.companyA.id, issueId: issue.id }));
      expect(error.code).toBe("CONFLICT");
      expect(error.domainCode).toBe("issue_closed");
      expect(await db().heartbeatRun.count({ where: { nativeIssueId: issue.id } })).toBe(0);
    }
  });

  it("reads another company's task as not found", async () => {
    const error = await rejection(callerFor(db(), w.principals.owner).issues.wake({ companyId: w.companyA.id, issueId: w.issueB.id }));
    expect(error.code).toBe("NOT_FOUND");
    expect(await db().heartbeatRun.count({ where: { nativeIssueId: w.issueB.id, status: "queued" } })).toBe(0);
  });
});

describe("runs.latestForIssue", () => {
  it("has no run before a wake, then the queued run, then the accepted result's outcome and summary", async () => {
    const issue = await task("todo", true);
    const member = callerFor(db(), w.principals.member);
    const input = { companyId: w.companyA.id, issueId: issue.id };
    expect(await member.runs.latestForIssue(input)).toEqual({ run: null, result: null });

    const { runId } = await member.issues.wake(input);
    expect(await member.runs.latestForIssue(input)).toMatchObject({ run: { id: runId, status: "queued", agent: { name: "Runner" } }, result: null });

    // What a claim and the finish API leave behind (their own tests live in core).
    await db().heartbeatRun.update({ where: { id: runId }, data: { status: "succeeded", startedAt: new Date(), finishedAt: new Date() } });
    const storeResult = (schemaStatus: "accepted" | "rejected", payload: object, dedupeKey: string) =>
      db().nativeRunResult.create({
        data: {
          companyId: w.companyA.id,
          runId,
          issueId: issue.id,
          agentId: runner.id,
          schemaStatus,
          ...(schemaStatus === "rejected" ? { rejectionCode: "result_schema_invalid" } : {}),
          payload,
          canonicalSha256: dedupeKey.padEnd(64, "0"),
          dedupeKey,
        },
      });
    await storeResult("rejected", { summary: "not this one" }, "bad");
    await storeResult("accepted", { schema: "copyback.run-result.v1", outcome: "in_review", summary: "Wrote notes/builder.log." }, "good");
    expect(await member.runs.latestForIssue(input)).toMatchObject({
      run: { id: runId, status: "succeeded" },
      result: { outcome: "in_review", summary: "Wrote notes/builder.log." },
    });
  });

  it("reads another company's task as not found", async () => {
    const error = await rejection(callerFor(db(), w.principals.owner).runs.latestForIssue({ companyId: w.companyA.id, issueId: w.issueB.id }));
    expect(error.code).toBe("NOT_FOUND");
  });
});

describe("runs.workspace and the lease in runs.finalization", () => {
  async function finishedRun(leaseMetadata: object) {
    const issue = await task("in_review", true);
    const run = await db().heartbeatRun.create({
      data: { companyId: w.companyA.id, agentId: runner.id, nativeIssueId: issue.id, status: "succeeded", nativePhase: "committed" },
    });
    const environment = await db().environment.findFirstOrThrow({ where: { companyId: w.companyA.id, name: "Local sandbox" } });
    await db().environmentLease.create({
      data: {
        companyId: w.companyA.id,
        environmentId: environment.id,
        executionWorkspaceId: workspaceId,
        runId: run.id,
        issueId: issue.id,
        provider: "local",
        pluginId: "builtin.local",
        leasePolicy: "ephemeral",
        status: "destroyed",
        metadata: leaseMetadata,
        releasedAt: new Date(),
      },
    });
    for (const phase of ["workspace_prepare", "workspace_finalize"] as const) {
      await db().workspaceOperation.create({
        data: {
          companyId: w.companyA.id,
          runId: run.id,
          issueId: issue.id,
          phase,
          status: "succeeded",
          finishedAt: new Date(),
          // What the finalizer writes: the counts, and the versioned record of the paths.
          metadata:
            phase === "workspace_finalize"
              ? { attempt: 1, written: 2, deleted: 1, unchanged: false, stage: "primary", changes: recordFinalizeChanges(["notes/builder.log", "README.md"], ["old.txt"]) }
              : { descriptor: {} },
        },
      });
    }
    return run;
  }

  it("lists the workspace's files with sizes, omits excluded trees, shows a link without following it, and this run's changes", async () => {
    const run = await finishedRun({ isolated: false });
    const data = await callerFor(db(), w.principals.member).runs.workspace({ companyId: w.companyA.id, runId: run.id });
    expect(data.workspace).toEqual({
      name: "acme-main",
      listing: {
        kind: "listed",
        entries: [
          { path: "README.md", kind: "file", size: 7 },
          { path: "escape", kind: "symlink", size: null },
          { path: "notes", kind: "directory", size: null },
          { path: "notes/builder.log", kind: "file", size: 17 },
        ],
        more: 0,
        moreIsLowerBound: false,
      },
    });
    expect(data.changes).toEqual({
      written: { paths: ["README.md", "notes/builder.log"], total: 2 },
      deleted: { paths: ["old.txt"], total: 1 },
      unchanged: false,
      omitted: false,
    });
    expect(data.isolated).toBe(false);
    // Neither the host path nor anything behind the link leaves the server.
    const text = JSON.stringify(data);
    expect(text).not.toContain(dir);
    expect(text).not.toContain("host-secret");
  });

  it("gives operators the lease (provider, plugin, policy, status, isolation) and the finalize operation's change counts", async () => {
    const run = await finishedRun({ isolated: true });
    const data = await callerFor(db(), w.principals.manager).runs.finalization({ companyId: w.companyA.id, runId: run.id });
    expect(data.leases).toEqual([
      expect.objectContaining({ provider: "local", pluginId: "builtin.local", policy: "ephemeral", status: "destroyed", isolated: true }),
    ]);
    expect(data.workspaceOperations.map((op) => [op.phase, op.changes])).toEqual([
      ["workspace_prepare", null],
      ["workspace_finalize", { written: 2, deleted: 1, unchanged: false, omitted: false }],
    ]);
  });

  it("an unisolated run and its lease say why, from the worker's isolation report under COPYBACK_HOME", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "copyback-isolation-home-"));
    const before = process.env.COPYBACK_HOME;
    try {
      const unisolated = await finishedRun({ isolated: false });
      const isolated = await finishedRun({ isolated: true });
      const member = callerFor(db(), w.principals.member);
      const manager = callerFor(db(), w.principals.manager);
      process.env.COPYBACK_HOME = home;
      // No report yet: only that it is not isolated.
      expect((await member.runs.workspace({ companyId: w.companyA.id, runId: unisolated.id })).isolationReason).toBeNull();
      await writeIsolationReport(home, isolationReport({ usable: false, reason: "bubblewrap (bwrap) is not installed on this host" }, new Date("2026-12-01T10:00:00Z"), "host-1"));
      const reason = "bubblewrap (bwrap) is not installed on this host (worker on host-1, checked 2026-12-01T10:00:00.000Z)";
      expect((await member.runs.workspace({ companyId: w.companyA.id, runId: unisolated.id })).isolationReason).toBe(reason);
      expect((await manager.runs.finalization({ companyId: w.companyA.id, runId: unisolated.id })).leases).toEqual([
        expect.objectContaining({ isolated: false, isolationReason: reason }),
      ]);
      // An isolated run says nothing of the host's current state.
      expect((await member.runs.workspace({ companyId: w.companyA.id, runId: isolated.id })).isolationReason).toBeNull();
      expect((await manager.runs.finalization({ companyId: w.companyA.id, runId: isolated.id })).leases).toEqual([
        expect.objectContaining({ isolated: true, isolationReason: null }),
      ]);
    } finally {
      if (before === undefined) delete process.env.COPYBACK_HOME;
      else process.env.COPYBACK_HOME = before;
      await rm(home, { recursive: true, force: true });
    }
  });

  it("reads lease metadata it cannot parse as unknown isolation, not as isolated", async () => {
    const run = await finishedRun({ isolated: "yes" });
    expect((await callerFor(db(), w.principals.member).runs.workspace({ companyId: w.companyA.id, runId: run.id })).isolated).toBeNull();
  });

  it("keeps operator diagnostics from members (R-UI-2) while the file listing is theirs", async () => {
    const run = await finishedRun({ isolated: false });
    const member = callerFor(db(), w.principals.member);
    expect((await rejection(member.runs.finalization({ companyId: w.companyA.id, runId: run.id }))).code).toBe("FORBIDDEN");
    expect((await member.runs.workspace({ companyId: w.companyA.id, runId: run.id })).workspace).not.toBeNull();
  });

  it("reads another company's run as not found", async () => {
    const error = await rejection(callerFor(db(), w.principals.owner).runs.workspace({ companyId: w.companyA.id, runId: w.runB.id }));
    expect(error.code).toBe("NOT_FOUND");
  });
});
