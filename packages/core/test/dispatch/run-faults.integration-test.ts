// Provider faults on demand (the fake provider) through the whole executor: each fault mode
// reaches the state it must, and executeRun never throws. Real PostgreSQL and real host files; the
// sandbox is the fake provider's in-memory workspace exported as a real tar stream.
import { describe, expect, it } from "vitest";
import { executeRun } from "../../src/dispatch/execute-run";
import { publishRunResult } from "../../src/runs/publish-result";
import { RESULT_DONE as DONE, RESULT_IN_REVIEW, readTree, useFakeFaultWorld } from "./dispatch-fixture";

const world = useFakeFaultWorld();

describe("fake provider faults through executeRun", () => {
  it("R-SO-3 exec fails: the run fails with the provider's code and the lease is stopped and retained by policy", async () => {
    const task = await world.task({ provider: "fake", files: { "a.txt": "a\n" } });
    world.fake.faults.failTimes("exec", 1);
    const s = await world.state(await world.runOnce(task));
    expect(s.run).toMatchObject({ status: "failed", errorCode: "provider_fault_injected" });
    expect(s.coordinator?.phase).toBe("terminal_failure");
    expect(s.issue.status).toBe("blocked");
    expect(s.leases).toHaveLength(1);
    // Ephemeral + failed: stop-and-retain (files kept for recovery) through builtin.stopLease.
    expect(s.leases[0]?.status).toBe("released");
    expect(s.leases[0]?.metadata).toMatchObject({ sandboxStopAndRetainReceipt: { method: "builtin.stopLease" } });
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "a\n" } });
  });

  it("acquire fails once: the repeat with the same lease id allocates and the run commits", async () => {
    const task = await world.task({ provider: "fake" });
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, resultFile: DONE }));
    world.fake.faults.failTimes("acquire", 1);
    const s = await world.state(await world.runOnce(task));
    expect(s.run.status).toBe("succeeded");
    expect(s.leases.map((lease) => lease.status)).toEqual(["destroyed"]);
    expect(world.fake.calls.filter((call) => call.op === "acquire" && call.leaseId === s.leases[0]?.id)).toHaveLength(2);
    expect(await readTree(task.hostPath)).toEqual({ "b.txt": { type: "file", content: "b\n" } });
  });

  it("acquire fails twice: the run fails and the lease waits in pending_cleanup with a destroy intent (never failed)", async () => {
    const task = await world.task({ provider: "fake" });
    world.fake.faults.failTimes("acquire", 2);
    const s = await world.state(await world.runOnce(task));
    expect(s.run).toMatchObject({ status: "failed", errorCode: "provider_fault_injected" });
    expect(s.leases.map((lease) => lease.status)).toEqual(["pending_cleanup"]);
    expect(s.leases[0]?.metadata).toMatchObject({ sandboxDestroy: { leaseId: s.leases[0]?.id, providerLeaseId: null, reason: "acquire_unconfirmed" } });
    expect(s.operations).toEqual([]);
  });

  it("R-RR-1 export fails twice: finalization retries before any host write and commits", async () => {
    const task = await world.task({ provider: "fake", files: { "a.txt": "a\n" } });
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, resultFile: DONE }));
    world.fake.faults.failTimes("exportWorkspace", 2);
    const s = await world.state(await world.runOnce(task));
    expect(s.run.status).toBe("succeeded");
    expect(s.coordinator?.phase).toBe("committed");
    expect(s.issue.status).toBe("done");
    expect(s.operations.filter((op) => op.phase === "workspace_finalize").map((op) => op.status)).toEqual(["succeeded"]);
    expect(world.fake.calls.filter((call) => call.op === "exportWorkspace" && call.leaseId === s.leases[0]?.id)).toHaveLength(3);
    expect(s.leases[0]?.status).toBe("destroyed");
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "a\n" }, "b.txt": { type: "file", content: "b\n" } });
  });

  it("export keeps failing: the coordinator waits in retryable_failure and the lease is retained for the retry", async () => {
    const task = await world.task({ provider: "fake" });
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, resultFile: RESULT_IN_REVIEW }));
    world.fake.faults.failTimes("exportWorkspace", 10);
    const s = await world.state(await world.runOnce(task));
    expect(s.coordinator?.phase).toBe("retryable_failure");
    expect(s.coordinator?.nextAttemptAt).not.toBeNull();
    // The accepted result stands: the run is not failed; the reconciler (next issue) retries.
    expect(s.run.status).toBe("running");
    expect(s.leases[0]?.status).toBe("released");
    expect(await readTree(task.hostPath)).toEqual({});
  });

  it("the agent writes no result: the run fails agent_exited_without_result", async () => {
    const task = await world.task({ provider: "fake" });
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, stdout: "done, no result\n" }));
    const s = await world.state(await world.runOnce(task));
    expect(s.run).toMatchObject({ status: "failed", errorCode: "agent_exited_without_result" });
    expect(s.events.find((e) => e.code === "agent.output")?.message).toBe("done, no result");
    // Without an accepted result nothing is copied back.
    expect(await readTree(task.hostPath)).toEqual({});
  });

  it("a malformed result file is stored rejected and the run fails saying why", async () => {
    const task = await world.task({ provider: "fake" });
    world.scriptFake(() => ({ resultFile: "{ not json" }));
    const s = await world.state(await world.runOnce(task));
    expect(s.run).toMatchObject({ status: "failed", errorCode: "agent_exited_without_result" });
    expect(s.run.errorMessage).toContain("rejected");
    expect(await world.db.nativeRunResult.findMany({ where: { runId: s.run.id }, select: { schemaStatus: true, dedupeKey: true, rejectionCode: true } })).toEqual([
      { schemaStatus: "rejected", dedupeKey: "result-file", rejectionCode: "result_schema_invalid" },
    ]);
  });

  it("R-ORP-2 a result accepted through the finish API during the turn wins; the later result file is ignored", async () => {
    const task = await world.task({ provider: "fake" });
    world.scriptFake(async ({ request }) => {
      const runId = request.env.COPYBACK_RUN_ID ?? "";
      await publishRunResult(world.db, { runId, agentId: task.agentId, dedupeKey: "finish-1", document: JSON.parse(DONE), source: "finish_api" });
      return { files: { "c.txt": "c\n" }, resultFile: RESULT_IN_REVIEW };
    });
    const s = await world.state(await world.runOnce(task));
    expect(s.run.status).toBe("succeeded");
    expect(s.issue.status).toBe("done");
    expect(s.codes).toContain("result.file_ignored");
    expect(await readTree(task.hostPath)).toEqual({ "c.txt": { type: "file", content: "c\n" } });
  });

  it("the agent receives its run, issue and API URL in its environment and its adapter env", async () => {
    const task = await world.task({ provider: "fake", adapterConfig: { timeoutSeconds: 30, env: { GREETING: "hi" } } });
    let seen: Record<string, string> = {};
    let timeoutMs = 0;
    world.scriptFake(({ request }) => {
      seen = { ...request.env };
      timeoutMs = request.timeoutMs;
      return { resultFile: RESULT_IN_REVIEW };
    });
    const runId = await world.runOnce(task, { deps: { apiUrl: "http://127.0.0.1:3100" } });
    // And its run-scoped agent key for the finish call.
    expect(seen).toEqual({
      GREETING: "hi",
      COPYBACK_RUN_ID: runId,
      COPYBACK_ISSUE_ID: task.issueId,
      COPYBACK_API_URL: "http://127.0.0.1:3100",
      COPYBACK_API_KEY: expect.stringMatching(/^cba_[A-Za-z0-9_-]{43}$/),
    });
    expect(timeoutMs).toBe(30_000);
  });

  it("a cancelled turn (the worker stopping past its drain deadline) fails the run agent_cancelled", async () => {
    const task = await world.task({ provider: "fake" });
    const controller = new AbortController();
    world.scriptFake(({ signal }) => new Promise((resolve) => signal.addEventListener("abort", () => resolve({ exitCode: 0 }))));
    setTimeout(() => controller.abort(), 200);
    const s = await world.state(await world.runOnce(task, { signal: controller.signal }));
    expect(s.run).toMatchObject({ status: "failed", errorCode: "agent_cancelled" });
  });

  it("a busy lease (another run on the same environment and workspace) puts the run back in the queue; it runs later", async () => {
    const first = await world.task({ provider: "fake" });
    // A second task on the same environment and workspace.
    const issue = await world.db.issue.create({
      data: { companyId: world.companyId, number: 900, identifier: "DSP-900", title: "Same workspace", status: "todo", executionWorkspaceId: first.workspaceId },
    });
    const second = { ...first, issueId: issue.id };
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    world.scriptFake(async ({ request }) => {
      if (request.env.COPYBACK_ISSUE_ID === first.issueId) await gate;
      return { resultFile: RESULT_IN_REVIEW };
    });
    const firstRun = await world.wake(first);
    const [claimedFirst] = await world.claim(1);
    const running = executeRun(world.deps(), claimedFirst!, new AbortController().signal);
    await waitFor(async () => (await world.state(firstRun)).codes.includes("agent.started"));

    const secondRun = await world.wake(second);
    const [claimedSecond] = await world.claim(1);
    expect(claimedSecond?.runId).toBe(secondRun);
    await executeRun(world.deps({ leaseWaitMs: 50 }), claimedSecond!, new AbortController().signal);
    const requeued = await world.state(secondRun);
    expect(requeued.run).toMatchObject({ status: "queued", startedAt: null, controllerPid: null });
    expect(requeued.coordinator).toBeNull();
    expect(requeued.codes).toEqual(expect.arrayContaining(["lease.busy", "run.requeued"]));

    release();
    await running;
    expect((await world.state(firstRun)).run.status).toBe("succeeded");
    const [again] = await world.claim(1);
    expect(again?.runId).toBe(secondRun);
    await executeRun(world.deps(), again!, new AbortController().signal);
    expect((await world.state(secondRun)).run.status).toBe("succeeded");
  });

  it("a run whose context is unusable (agent without a command) fails with a clear code and allocates nothing", async () => {
    const task = await world.task({ provider: "fake", command: [""] });
    const s = await world.state(await world.runOnce(task));
    expect(s.run).toMatchObject({ status: "failed", errorCode: "agent_without_command" });
    expect(s.leases).toEqual([]);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
