// Hangs and lost replies of the fake provider through the whole executor (the fake
// provider's fault modes must reach the right states): a hung export meets the export deadline and is
// retried (R-RR-1); a lost reply to acquire, exec, exportWorkspace or stopLease leaves the run and
// the lease where recovery can find them, never released or destroyed on a guess.
import { describe, expect, it } from "vitest";
import type { PrismaClient } from "@copyback/db/client";
import { releaseLeaseByPolicy } from "../../src/leases/release-lease";
import { createFakeProvider } from "../../src/providers/fake/index";
import { finalizationSweep } from "../../src/recovery/sweeps/finalization-sweep";
import { publishRunResult } from "../../src/runs/publish-result";
import { RESULT_DONE as DONE, RESULT_IN_REVIEW, readTree, useFakeFaultWorld } from "./dispatch-fixture";

const world = useFakeFaultWorld();
const exportCalls = (leaseId: string | undefined) => world.fake.calls.filter((call) => call.op === "exportWorkspace" && call.leaseId === leaseId);

describe("export deadline through executeRun", () => {
  it("R-RR-1 a hung export is aborted at the deadline before any host write and retried; the run commits", async () => {
    const task = await world.task({ provider: "fake" });
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, resultFile: DONE }));
    world.fake.faults.hang("exportWorkspace", 1);
    const s = await world.state(await world.runOnce(task, { deps: { exportTimeoutMs: 1_500 } }));
    expect(s.run.status).toBe("succeeded");
    expect(s.coordinator?.phase).toBe("committed");
    expect(s.issue.status).toBe("done");
    expect(exportCalls(s.leases[0]?.id)).toHaveLength(2);
    expect(s.events.filter((e) => e.code === "workspace.copyback_retry").map((e) => (e.payload as { errorCode: string }).errorCode)).toEqual(["provider_export_timeout"]);
    expect(s.leases[0]?.status).toBe("destroyed");
    expect(await readTree(task.hostPath)).toEqual({ "b.txt": { type: "file", content: "b\n" } });
  });

  it("R-RR-1 an export that hangs on every try: retryable_failure with next_attempt_at, the accepted result kept, the sandbox retained", async () => {
    const task = await world.task({ provider: "fake", files: { "a.txt": "a\n" } });
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, resultFile: RESULT_IN_REVIEW }));
    world.fake.faults.hang("exportWorkspace");
    const s = await world.state(await world.runOnce(task, { deps: { exportTimeoutMs: 30 } }));
    expect(s.coordinator).toMatchObject({ phase: "retryable_failure", failureCode: "provider_export_timeout" });
    expect(s.coordinator?.nextAttemptAt).not.toBeNull();
    expect(s.coordinator?.resultId).not.toBeNull();
    // The accepted result stands: the run is not failed; the reconciler (next issue) retries.
    expect(s.run.status).toBe("running");
    expect(exportCalls(s.leases[0]?.id)).toHaveLength(3);
    expect(s.operations.filter((op) => op.phase === "workspace_finalize").map((op) => [op.status, op.errorCode])).toEqual([["failed", "provider_export_timeout"]]);
    // Stopped and retained by policy: the sandbox's files wait for the retry.
    expect(s.leases[0]?.status).toBe("released");
    expect(world.fake.store.get(s.leases[0]!.providerLeaseId!)?.workspace.has("b.txt")).toBe(true);
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "a\n" } });
  });

  it("a bad export timeout fails the run with its code; nothing reaches the host", async () => {
    const task = await world.task({ provider: "fake" });
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, resultFile: RESULT_IN_REVIEW }));
    const s = await world.state(await world.runOnce(task, { deps: { exportTimeoutMs: -1 } }));
    expect(s.run).toMatchObject({ status: "failed", errorCode: "export_timeout_invalid" });
    expect(s.operations.filter((op) => op.phase === "workspace_finalize")).toEqual([]);
    expect(await readTree(task.hostPath)).toEqual({});
  });
});

describe("lost provider replies through executeRun", () => {
  it("a lost acquire reply is repeated with the same lease id, which adopts the sandbox: the run commits with one sandbox", async () => {
    const task = await world.task({ provider: "fake" });
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, resultFile: DONE }));
    world.fake.faults.loseReply("acquire");
    const s = await world.state(await world.runOnce(task));
    expect(s.run.status).toBe("succeeded");
    expect(s.leases).toHaveLength(1);
    expect(world.fake.calls.filter((call) => call.op === "acquire" && call.leaseId === s.leases[0]?.id)).toHaveLength(2);
    expect(s.leases[0]?.status).toBe("destroyed");
    // The sandbox the lost reply made was the one used and destroyed: nothing leaked.
    expect([...world.fake.store.values()].filter((sandbox) => sandbox.leaseId === s.leases[0]?.id)).toEqual([]);
    expect(await readTree(task.hostPath)).toEqual({ "b.txt": { type: "file", content: "b\n" } });
  });

  it("acquire replies lost twice fail the run with provider_reply_lost; the lease is pending_cleanup with a destroy intent and nothing is prepared", async () => {
    const task = await world.task({ provider: "fake" });
    world.fake.faults.loseReply("acquire", 2);
    const s = await world.state(await world.runOnce(task));
    expect(s.run).toMatchObject({ status: "failed", errorCode: "provider_reply_lost" });
    expect(s.coordinator?.phase).toBe("terminal_failure");
    expect(s.leases).toHaveLength(1);
    const lease = s.leases[0]!;
    expect(lease).toMatchObject({
      status: "pending_cleanup",
      providerLeaseId: null,
      metadata: { sandboxDestroy: { leaseId: lease.id, providerLeaseId: null, reason: "acquire_unconfirmed" }, failure: { code: "provider_reply_lost" } },
    });
    // The sandbox the provider made is still there, findable by the lease id the intent names.
    expect([...world.fake.store.values()].filter((sandbox) => sandbox.leaseId === lease.id)).toHaveLength(1);
    expect(s.operations).toEqual([]);
    expect(world.fake.calls.filter((call) => call.op === "exec" && call.leaseId === lease.id)).toEqual([]);
  });

  it("a lost exec reply without an accepted result fails the run; the sandbox and its files are stopped and retained", async () => {
    const task = await world.task({ provider: "fake", files: { "a.txt": "a\n" } });
    // The result file travels in exec's reply: lost with it.
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, resultFile: RESULT_IN_REVIEW }));
    world.fake.faults.loseReply("exec");
    const s = await world.state(await world.runOnce(task));
    expect(s.run).toMatchObject({ status: "failed", errorCode: "provider_reply_lost" });
    expect(s.coordinator?.phase).toBe("terminal_failure");
    expect(s.issue.status).toBe("blocked");
    expect(s.leases[0]).toMatchObject({ status: "released", metadata: { sandboxStopAndRetainReceipt: { method: "builtin.stopLease" } } });
    const sandbox = world.fake.store.get(s.leases[0]!.providerLeaseId!);
    expect(sandbox?.state).toBe("stopped");
    expect(sandbox?.workspace.has("b.txt")).toBe(true);
    expect(exportCalls(s.leases[0]?.id)).toEqual([]);
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "a\n" } });
  });

  it("R-ORP-2 a lost exec reply after the finish API accepted a result: the accepted result is finalized and committed", async () => {
    const task = await world.task({ provider: "fake" });
    world.scriptFake(async ({ request }) => {
      const runId = request.env.COPYBACK_RUN_ID ?? "";
      await publishRunResult(world.db, { runId, agentId: task.agentId, dedupeKey: "finish-1", document: JSON.parse(DONE), source: "finish_api" });
      return { files: { "c.txt": "c\n" } };
    });
    world.fake.faults.loseReply("exec");
    const s = await world.state(await world.runOnce(task));
    expect(s.run.status).toBe("succeeded");
    expect(s.coordinator?.phase).toBe("committed");
    expect(s.issue.status).toBe("done");
    expect(s.codes).toContain("agent.exec_failed_after_result");
    expect(s.leases[0]?.status).toBe("destroyed");
    expect(await readTree(task.hostPath)).toEqual({ "c.txt": { type: "file", content: "c\n" } });
  });

  it("R-RR-1 a lost export reply is retried before any host write and the run commits", async () => {
    const task = await world.task({ provider: "fake" });
    world.scriptFake(() => ({ files: { "d.txt": "d\n" }, resultFile: DONE }));
    world.fake.faults.loseReply("exportWorkspace");
    const s = await world.state(await world.runOnce(task));
    expect(s.run.status).toBe("succeeded");
    expect(s.coordinator?.phase).toBe("committed");
    expect(exportCalls(s.leases[0]?.id)).toHaveLength(2);
    expect(s.events.filter((e) => e.code === "workspace.copyback_retry").map((e) => (e.payload as { errorCode: string }).errorCode)).toEqual(["provider_reply_lost"]);
    expect(s.operations.filter((op) => op.phase === "workspace_finalize").map((op) => op.status)).toEqual(["succeeded"]);
    expect(await readTree(task.hostPath)).toEqual({ "d.txt": { type: "file", content: "d\n" } });
  });

  it("R-SO-1 a lost stopLease reply leaves the lease pending_cleanup with its intent, never released or destroyed; a later release settles it", async () => {
    const task = await world.task({ provider: "fake" });
    world.scriptFake(() => ({ files: { "e.txt": "e\n" }, stdout: "no result\n" }));
    world.fake.faults.loseReply("stopLease");
    const s = await world.state(await world.runOnce(task));
    expect(s.run).toMatchObject({ status: "failed", errorCode: "agent_exited_without_result" });
    const lease = s.leases[0]!;
    expect(lease.status).toBe("pending_cleanup");
    const intent = (lease.metadata as Record<string, { requestId: string } | undefined>).sandboxStopAndRetain;
    expect(intent).toMatchObject({ schema: "copyback.sandbox-stop-and-retain.v2", runId: s.run.id, leaseId: lease.id, pluginId: "builtin.fake" });
    expect(lease.metadata).toMatchObject({ failure: { code: "provider_reply_lost" } });
    expect(lease.metadata).not.toHaveProperty("sandboxStopAndRetainReceipt");
    expect(s.codes).toContain("lease.cleanup_pending");
    // The stop did happen (its reply was lost); the sandbox and its files are still there.
    const sandbox = world.fake.store.get(lease.providerLeaseId!);
    expect(sandbox?.state).toBe("stopped");
    expect(sandbox?.workspace.has("e.txt")).toBe(true);
    expect(world.fake.calls.filter((call) => call.op === "destroy" && call.leaseId === lease.id)).toEqual([]);

    // The retry (the restart sweep's job) asks again with the same request and gets the receipt.
    expect(await releaseLeaseByPolicy(world.db, world.registry, { leaseId: lease.id, runId: s.run.id, outcome: "failed" })).toMatchObject({ kind: "stopped_and_retained" });
    const after = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(after.status).toBe("released");
    expect(after.metadata).toMatchObject({ sandboxStopAndRetainReceipt: { method: "builtin.stopLease", requestId: intent!.requestId } });
  });
});

describe("capabilities through executeRun", () => {
  it("R-EX-6 a plugin that does not advertise exec fails the run with provider_capability_missing and runs nothing", async () => {
    const noExec = createFakeProvider({ pluginId: "test.fake-no-exec", capabilities: ["acquire", "seedWorkspace", "exportWorkspace", "environmentStopLease", "destroy", "inspect"] });
    world.registry.register(noExec);
    const task = await world.task({ provider: "fake", pluginId: noExec.pluginId });
    const s = await world.state(await world.runOnce(task));
    expect(s.run).toMatchObject({ status: "failed", errorCode: "provider_capability_missing" });
    expect(noExec.calls.map((call) => call.op)).not.toContain("exec");
    expect(s.leases[0]?.status).toBe("released");
  });
});

describe("the executor's last line of defence", () => {
  /** The world's client, except that the executor's read of the run's status fails once it is armed (a terminated connection). */
  function dbLosingStatusRead(armed: { on: boolean }): PrismaClient {
    const db = world.db;
    const heartbeatRun = new Proxy(db.heartbeatRun, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (key !== "findUnique" || typeof value !== "function") return value;
        return (args: { select?: Record<string, unknown> }) => {
          if (armed.on && args.select && Object.keys(args.select).join() === "status") {
            armed.on = false;
            return Promise.reject(Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }));
          }
          return (value as (a: unknown) => unknown).call(target, args);
        };
      },
    });
    return new Proxy(db, { get: (target, key, receiver) => (key === "heartbeatRun" ? heartbeatRun : Reflect.get(target, key, receiver)) });
  }

  it("R-FO-6 a database failure after the result was accepted does not fail the run: the lease stays bound and the finalization sweep commits the saved result", async () => {
    const task = await world.task({ provider: "fake" });
    const armed = { on: false };
    world.scriptFake(() => {
      armed.on = true; // the agent's turn is over once this returns; the status read after it fails
      return { files: { "b.txt": "b\n" }, resultFile: DONE };
    });
    const runId = await world.runOnce(task, { deps: { db: dbLosingStatusRead(armed) } });
    const left = await world.state(runId);
    expect(armed.on).toBe(false);
    expect(left.run.status).toBe("running");
    expect(left.coordinator).toMatchObject({ phase: "result_accepted" });
    expect(left.leases.map((lease) => lease.status)).toEqual(["active"]);
    expect(await world.db.issueRecoveryAction.count({ where: { issueId: task.issueId } })).toBe(0);

    const sweep = finalizationSweep({ ...world.deps(), executesHere: () => false });
    expect(await sweep.handle({ runId, companyId: task.companyId })).toBe("committed");
    const done = await world.state(runId);
    expect(done.run.status).toBe("succeeded");
    expect(done.issue.status).toBe("done");
    expect(await readTree(task.hostPath)).toEqual({ "b.txt": { type: "file", content: "b\n" } });
  });

  it("a database failure before any result still fails the run as before (dispatch_internal_error)", async () => {
    const task = await world.task({ provider: "fake" });
    const armed = { on: false };
    world.scriptFake(() => {
      armed.on = true;
      return { files: { "b.txt": "b\n" }, exitCode: 0 };
    });
    const runId = await world.runOnce(task, { deps: { db: dbLosingStatusRead(armed) } });
    const s = await world.state(runId);
    expect(s.run).toMatchObject({ status: "failed", errorCode: "dispatch_internal_error" });
    expect(await readTree(task.hostPath)).toEqual({});
  });
});
