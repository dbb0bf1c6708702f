// A database outage before the agent starts: PostgreSQL ends the
// connection that writes one step of the run's setup (the lease bind after the provider's
// allocation, the preparation's record after the seed, the agent's run key). Nothing of the task's
// work exists yet, so the run goes back to the queue with an event that says why (R-FO-1: only a
// provider's failure pins a sandbox and fails the run), what the attempt created is settled by
// policy (a sandbox the lease could not record: its destroy intent for the cleanup sweep; a seeded
// one: released as a run whose agent never started) and a second execution commits.
//
// The failures are real (terminate-connection.ts: the backend running the statement terminates
// itself, FATAL 57P01 mid-statement), once per install. The requeue's own failure is a trigger
// raising 57P01 on the move back to `queued`.
import { Prisma } from "@copyback/db/client";
import { describe, expect, it } from "vitest";
import { executeRun } from "../../src/dispatch/execute-run";
import { leaseHeldSql } from "../../src/leases/lease-holds";
import { continueLeaseCleanup } from "../../src/leases/release-lease";
import { orphanSweep } from "../../src/recovery/sweeps/orphan-sweep";
import { PLAIN_LOCAL_PLUGIN, RESULT_DONE, readTree, submitResult, useFakeFaultWorld, type Task } from "./dispatch-fixture";
import { terminateConnectionOn, type TerminateOptions } from "./terminate-connection";

const world = useFakeFaultWorld();

const REQUEUED_WHILE_ACQUIRED = "The database was unavailable while the sandbox was being acquired; the run went back to the queue.";
const REQUEUED_WHILE_PREPARED = "The database was unavailable while the sandbox workspace was being prepared; the run went back to the queue.";
const REQUEUED_BEFORE_AGENT = "The database was unavailable before the agent could be started; the run went back to the queue.";

const terminateConnection = (table: string, when: string, options?: TerminateOptions) => terminateConnectionOn(world.db, table, when, options);

/** The statement that binds a new allocation to its lease (acquire-lease.ts, after the provider answered). */
const LEASE_BIND = "OLD.provider_lease_id IS NULL AND NEW.provider_lease_id IS NOT NULL";
/** The preparation's success record, after the seed (prepare-run-workspace.ts). */
const PREPARATION_RECORD = "OLD.phase = 'workspace_prepare' AND NEW.status = 'succeeded'";

async function withOutage<T>(install: Promise<() => Promise<void>>, body: () => Promise<T>): Promise<T> {
  const remove = await install;
  try {
    return await body();
  } finally {
    await remove();
  }
}

async function executeAgain(runId: string): Promise<void> {
  const claimed = (await world.claim(10)).find((run) => run.runId === runId);
  if (!claimed) throw new Error(`run ${runId} was not claimable`);
  await executeRun(world.deps(), claimed, new AbortController().signal);
}

async function held(leaseId: string): Promise<boolean> {
  const rows = await world.db.$queryRaw<{ held: boolean }[]>(Prisma.sql`SELECT ${leaseHeldSql("l")} AS held FROM environment_leases l WHERE l.id = ${leaseId}::uuid`);
  return rows[0]?.held ?? false;
}

const requeues = (s: Awaited<ReturnType<typeof world.state>>) => s.events.filter((e) => e.code === "run.requeued").map((e) => ({ message: e.message, payload: e.payload }));
const obligations = (runId: string) => world.db.issueRecoveryAction.count({ where: { runId } });

async function expectQueuedAgain(task: Task, runId: string) {
  const s = await world.state(runId);
  expect(s.run).toMatchObject({ status: "queued", errorCode: null, startedAt: null, controllerPid: null });
  expect(s.coordinator).toBeNull();
  expect(s.issue.status).not.toBe("blocked");
  expect(s.codes).not.toContain("run.failed");
  expect(await obligations(runId)).toBe(0);
  // No lease is left active under the queued run (the next execution would wait on it forever).
  expect(s.leases.filter((lease) => lease.status === "active")).toEqual([]);
  expect(task.issueId).toBe(s.run.nativeIssueId);
  return s;
}

describe("a database outage before the agent starts", () => {
  it("R-FO-1: the server ends the connection binding the provider's new sandbox to its lease: the run goes back to the queue saying why, the allocation waits for the cleanup sweep with its destroy intent, and the next execution commits", async () => {
    const task = await world.task({ provider: "fake", files: { "a.txt": "a\n" } });
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, resultFile: RESULT_DONE }));
    const runId = await withOutage(terminateConnection("environment_leases", LEASE_BIND), () => world.runOnce(task));

    const s = await expectQueuedAgain(task, runId);
    expect(requeues(s)).toEqual([{ message: REQUEUED_WHILE_ACQUIRED, payload: { reason: "database_unavailable", step: "acquisition" } }]);
    // The provider made a sandbox the lease never recorded: the lease names it by its id for the sweep.
    expect(s.leases).toHaveLength(1);
    const first = s.leases[0]!;
    expect(first).toMatchObject({ status: "pending_cleanup", providerLeaseId: null });
    expect(first.metadata).toMatchObject({ sandboxDestroy: { leaseId: first.id, runId, providerLeaseId: null, reason: "acquire_unconfirmed" } });
    expect([...world.fake.store.values()].filter((sandbox) => sandbox.leaseId === first.id)).toHaveLength(1);

    await executeAgain(runId);
    const after = await world.state(runId);
    expect(after.run.status).toBe("succeeded");
    expect(after.coordinator?.phase).toBe("committed");
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "a\n" }, "b.txt": { type: "file", content: "b\n" } });

    // Nothing leaks: the recorded intent destroys the first allocation (what the cleanup sweep runs).
    const lease = await world.db.environmentLease.findUniqueOrThrow({ where: { id: first.id } });
    expect(await continueLeaseCleanup(world.db, world.registry, lease, { resolveUnnamedAllocation: true })).toMatchObject({ kind: "destroyed" });
    expect([...world.fake.store.values()].filter((sandbox) => sandbox.leaseId === first.id)).toEqual([]);
  });

  it("R-FO-1, R-FO-4: the server ends the connection recording the seeded preparation: the preparation is settled under its own live claim, the seeded sandbox is destroyed by policy (its agent never started), no file obligation, and the next execution commits", async () => {
    const task = await world.task({ provider: "fake", files: { "a.txt": "a\n" } });
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, resultFile: RESULT_DONE }));
    const runId = await withOutage(terminateConnection("workspace_operations", PREPARATION_RECORD), () => world.runOnce(task));

    const s = await expectQueuedAgain(task, runId);
    expect(requeues(s)).toEqual([{ message: REQUEUED_WHILE_PREPARED, payload: { reason: "database_unavailable", step: "preparation" } }]);
    expect(s.operations.map((op) => [op.phase, op.status, op.errorCode])).toEqual([["workspace_prepare", "failed", "database_unavailable"]]);
    expect((s.operations[0]?.metadata as Record<string, unknown>).recoveryClaim).toBeUndefined();
    expect((s.operations[0]?.metadata as Record<string, unknown>).settledClaim).toMatchObject({ by: "claim_holder" });
    expect(s.leases.map((lease) => lease.status)).toEqual(["destroyed"]);
    expect(world.fake.calls.filter((call) => call.op === "exec" && call.leaseId === s.leases[0]?.id)).toEqual([]);

    await executeAgain(runId);
    const after = await world.state(runId);
    expect(after.run.status).toBe("succeeded");
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "a\n" }, "b.txt": { type: "file", content: "b\n" } });
    expect(after.leases.map((lease) => lease.status).sort()).toEqual(["destroyed", "destroyed"]);
  });

  it("R-FO-1: on a reuse_by_environment environment the seeded local sandbox is stopped and released, not held (its run is queued, not failed), and the run's next execution reuses it", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, policy: "reuse_by_environment", files: { "a.txt": "a\n" }, script: `echo b > b.txt; ${submitResult(RESULT_DONE)}` });
    const runId = await withOutage(terminateConnection("workspace_operations", PREPARATION_RECORD), () => world.runOnce(task));

    const s = await expectQueuedAgain(task, runId);
    expect(requeues(s)).toEqual([{ message: REQUEUED_WHILE_PREPARED, payload: { reason: "database_unavailable", step: "preparation" } }]);
    expect(s.leases).toHaveLength(1);
    const lease = s.leases[0]!;
    expect(lease.status).toBe("released");
    expect(lease.metadata).toMatchObject({ sandboxStopAndRetainReceipt: { providerLeaseId: lease.providerLeaseId, method: "environmentStopLease" } });
    expect(await held(lease.id)).toBe(false);

    await executeAgain(runId);
    const after = await world.state(runId);
    expect(after.run.status).toBe("succeeded");
    expect(after.leases.map((l) => l.id)).toEqual([lease.id]);
    expect(after.events.filter((e) => e.code === "lease.acquired").map((e) => (e.payload as { leaseId: string; reused: boolean }))).toMatchObject([
      { leaseId: lease.id, reused: false },
      { leaseId: lease.id, reused: true },
    ]);
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "a\n" }, "b.txt": { type: "file", content: "b\n" } });
  });

  it("R-FO-1: the server ends the connection minting the agent's run key: the agent is never started, its sandbox is destroyed by policy and the run goes back to the queue", async () => {
    const task = await world.task({ provider: "fake" });
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, resultFile: RESULT_DONE }));
    const runId = await withOutage(terminateConnection("agent_api_keys", "NEW.run_id IS NOT NULL", { event: "INSERT" }), () => world.runOnce(task));

    const s = await expectQueuedAgain(task, runId);
    expect(requeues(s)).toEqual([{ message: REQUEUED_BEFORE_AGENT, payload: { reason: "database_unavailable", step: "agent_start" } }]);
    expect(s.codes).not.toContain("agent.started");
    expect(world.fake.calls.filter((call) => call.op === "exec" && call.leaseId === s.leases[0]?.id)).toEqual([]);
    expect(s.leases.map((lease) => lease.status)).toEqual(["destroyed"]);

    await executeAgain(runId);
    expect((await world.state(runId)).run.status).toBe("succeeded");
  });

  it("R-FO-1: a provider failure at acquisition still fails the run as before (only the database's failure requeues)", async () => {
    const task = await world.task({ provider: "fake" });
    world.fake.faults.failTimes("acquire", 2);
    const s = await world.state(await world.runOnce(task));
    expect(s.run).toMatchObject({ status: "failed", errorCode: "provider_fault_injected" });
    expect(s.codes).not.toContain("run.requeued");
  });

  it("R-FO-1: a database that fails the same step on every execution ends the run after three requeues with database_unavailable (no endless queue)", async () => {
    const task = await world.task({ provider: "fake" });
    const runId = await withOutage(terminateConnection("environment_leases", LEASE_BIND, { times: 100 }), async () => {
      const id = await world.runOnce(task);
      for (let i = 0; i < 3; i++) await executeAgain(id);
      return id;
    });
    const s = await world.state(runId);
    expect(s.run).toMatchObject({ status: "failed", errorCode: "database_unavailable" });
    expect(requeues(s)).toHaveLength(3);
    // Each attempt's unrecorded allocation waits for the cleanup sweep; none is left active.
    expect(s.leases.map((lease) => lease.status)).toEqual(["pending_cleanup", "pending_cleanup", "pending_cleanup", "pending_cleanup"]);
    expect(await obligations(runId)).toBe(0);
  });

  it("R-ORP-2: when the database still refuses the requeue after the executor's wait, the run is left running to this live process's orphan sweep, which leaves it while the executor runs and ends it process_lost once it does not (never running forever)", async () => {
    const task = await world.task({ provider: "fake" });
    const db = world.db;
    // The move back to the queue refused as a server shutting down would (57P01), however often it is tried.
    await db.$executeRawUnsafe(`
      CREATE FUNCTION copyback_test_refuse_requeue() RETURNS trigger AS $$
      BEGIN RAISE EXCEPTION 'terminating connection due to administrator command' USING ERRCODE = '57P01'; END $$ LANGUAGE plpgsql`);
    await db.$executeRawUnsafe(`
      CREATE TRIGGER copyback_test_refuse_requeue BEFORE UPDATE ON heartbeat_runs FOR EACH ROW
      WHEN (OLD.status = 'running' AND NEW.status = 'queued') EXECUTE FUNCTION copyback_test_refuse_requeue()`);
    let runId: string;
    try {
      runId = await withOutage(terminateConnection("environment_leases", LEASE_BIND), () => world.runOnce(task, { deps: { databaseOutageMs: 300 } }));
    } finally {
      await db.$executeRawUnsafe(`DROP TRIGGER copyback_test_refuse_requeue ON heartbeat_runs`);
      await db.$executeRawUnsafe(`DROP FUNCTION copyback_test_refuse_requeue()`);
    }
    const left = await world.state(runId);
    expect(left.run.status).toBe("running");
    expect(left.leases.filter((lease) => lease.status === "active")).toEqual([]);

    const controller = world.deps().controller;
    expect((await orphanSweep({ db, controller, executesHere: () => true }).due(100)).map((u) => u.runId)).not.toContain(runId);
    const sweep = orphanSweep({ db, controller, executesHere: () => false });
    const units = (await sweep.due(100)).filter((u) => u.runId === runId);
    expect(units).toHaveLength(1);
    expect(await sweep.handle(units[0]!)).toBe("process_lost");
    const s = await world.state(runId);
    expect(s.run).toMatchObject({ status: "failed", errorCode: "process_lost" });
    // The only lease names no allocation: no sandbox to recover, so no obligation either.
    expect(await obligations(runId)).toBe(0);
  });
});
