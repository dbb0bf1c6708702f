// claimQueuedRuns against a real PostgreSQL: FOR UPDATE SKIP LOCKED across real connections,
// the limit, oldest first, what a claim writes, and runs of closed tasks not started.
import { beforeAll, describe, expect, it } from "vitest";
import { createPrismaClient, type PrismaClient } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import { claimQueuedRuns } from "../../src/dispatch/claim-runs";
import { readNativeClaim } from "../../src/records/run-json";
import { wakeAgent } from "../../src/runs/wake-agent";
import { buildCompany, CONTROLLER, USER_ACTOR, type Company } from "./runs-fixture";

const db = useTestDatabase();
let world: Company;

beforeAll(async () => {
  world = await buildCompany(db.prisma());
});

async function queue(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 1) {
    const issue = await world.issue();
    ids.push((await wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, actor: USER_ACTOR() })).runId);
  }
  return ids;
}

async function drain() {
  for (;;) if ((await claimQueuedRuns(db.prisma(), { limit: 50, controller: CONTROLLER })).length === 0) return;
}

describe("claimQueuedRuns", () => {
  it("starts the oldest queued runs up to the limit and writes the claim (controller, coordinator, task)", async () => {
    await drain();
    const ids = await queue(3);
    const claimed = await claimQueuedRuns(db.prisma(), { limit: 2, controller: CONTROLLER });
    expect(claimed.map((c) => c.runId)).toEqual(ids.slice(0, 2));
    const run = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: ids[0]! } });
    expect(run).toMatchObject({
      status: "running",
      controllerPid: CONTROLLER.pid,
      controllerProcessStart: CONTROLLER.startTime,
      controllerBootId: CONTROLLER.bootId,
      controllerHost: CONTROLLER.host,
      nativePhase: "observed",
      resultJson: { finalizationPhase: "observed" },
    });
    expect(run.startedAt).toBeInstanceOf(Date);
    const issue = await db.prisma().issue.findUniqueOrThrow({ where: { id: run.nativeIssueId } });
    expect(issue).toMatchObject({ status: "in_progress", executionRunId: run.id, checkoutRunId: run.id, statusVersion: 1 });
    expect(readNativeClaim(run.runnerProfileJson)).toMatchObject({ issueId: issue.id, statusVersion: 1 });
    expect(await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.id } })).toMatchObject({ phase: "observed", issueId: issue.id, attempt: 0 });
    expect(claimed[0]).toEqual({ runId: run.id, companyId: world.company.id, issueId: issue.id, agentId: world.agent.id });
    expect((await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: ids[2]! } })).status).toBe("queued");
    expect(await claimQueuedRuns(db.prisma(), { limit: 0, controller: CONTROLLER })).toEqual([]);
  });

  it("two concurrent claimers on their own connections never claim the same run", async () => {
    await drain();
    const ids = await queue(12);
    const clients: PrismaClient[] = [1, 2].map(() => createPrismaClient({ databaseUrl: db.url(), poolSize: 2, applicationName: "claimer" }));
    try {
      const claimedBy = await Promise.all(
        clients.map(async (client) => {
          const mine: string[] = [];
          for (let round = 0; round < 10; round += 1) {
            const batch = await claimQueuedRuns(client, { limit: 3, controller: CONTROLLER });
            expect(batch.length).toBeLessThanOrEqual(3);
            mine.push(...batch.map((b) => b.runId));
          }
          return mine;
        }),
      );
      const all = claimedBy.flat();
      expect(new Set(all).size).toBe(all.length);
      expect([...all].sort()).toEqual([...ids].sort());
      expect(await db.prisma().nativeRunFinalization.count({ where: { runId: { in: ids } } })).toBe(ids.length);
    } finally {
      await Promise.all(clients.map((c) => c.$disconnect()));
    }
  });

  it("a queued run is skipped, not waited for, while another transaction holds it", async () => {
    await drain();
    const [held, free] = await queue(2);
    const holder = createPrismaClient({ databaseUrl: db.url(), poolSize: 1, applicationName: "holder" });
    try {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holding = holder.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM heartbeat_runs WHERE id = ${held!}::uuid FOR UPDATE`;
        locked();
        await released;
      }, { timeout: 30_000 });
      await isLocked;
      const claimed = await claimQueuedRuns(db.prisma(), { limit: 5, controller: CONTROLLER });
      release();
      await holding;
      expect(claimed.map((c) => c.runId)).toEqual([free]);
      expect((await claimQueuedRuns(db.prisma(), { limit: 5, controller: CONTROLLER })).map((c) => c.runId)).toEqual([held]);
    } finally {
      await holder.$disconnect();
    }
  });

  it("a run whose task was cancelled meanwhile is not started: cancelled with issue_closed, the task untouched", async () => {
    await drain();
    const [runId] = await queue(1);
    const run = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId! } });
    await db.prisma().issue.update({ where: { id: run.nativeIssueId }, data: { status: "cancelled", statusVersion: 7 } });
    expect(await claimQueuedRuns(db.prisma(), { limit: 5, controller: CONTROLLER })).toEqual([]);
    expect(await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId! } })).toMatchObject({ status: "cancelled", errorCode: "issue_closed" });
    expect(await db.prisma().issue.findUniqueOrThrow({ where: { id: run.nativeIssueId } })).toMatchObject({ status: "cancelled", statusVersion: 7, executionRunId: null, checkoutRunId: null });
    expect(await db.prisma().nativeRunFinalization.count({ where: { runId: runId! } })).toBe(0);
  });

  it("a negative or fractional limit is refused", async () => {
    await expect(claimQueuedRuns(db.prisma(), { limit: -1, controller: CONTROLLER })).rejects.toMatchObject({ code: "claim_limit_invalid" });
    await expect(claimQueuedRuns(db.prisma(), { limit: 1.5, controller: CONTROLLER })).rejects.toMatchObject({ code: "claim_limit_invalid" });
  });
});
