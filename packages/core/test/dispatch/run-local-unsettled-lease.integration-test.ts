// On the real local provider, a sandbox stays its run's until that run's copyback
// is settled. A transient export failure (the local provider's rehearsal fault, three failed tries
// of the first finalization attempt) leaves the run `running` with its coordinator in
// `retryable_failure` and its sandbox stopped and retained; then
//   - another task's run on the same reuse_by_environment environment and execution workspace
//     gets another allocation, and the reconciler's retry commits the first run's own edits;
//   - an export from a lease that is no longer bound to the run is refused with nothing written;
//   - an ephemeral sandbox kept through the retry is listed as retained (and discardable) while
//     unsettled, and destroyed after the retry commits.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { readStopReceipt } from "../../src/leases/lease-metadata";
import { finalizationSweep } from "../../src/recovery/sweeps/finalization-sweep";
import { settledRunLeasesSweep } from "../../src/recovery/sweeps/settled-run-leases-sweep";
import { discardRetainedSandbox } from "../../src/sandboxes/discard-sandbox";
import { listRetainedSandboxes } from "../../src/sandboxes/list-retained";
import { deadIdentity } from "../recovery/recovery-fixture";
import { DispatchWorld, readTree, RESULT_DONE, submitResult, type Task } from "./dispatch-fixture";

const database = useTestDatabase({ poolSize: 8 });
const world = new DispatchWorld(database);
beforeAll(() => world.setUp());
afterAll(() => world.tearDown());

const sandboxRoot = (providerLeaseId: string) => path.join(world.instanceRoot, "sandboxes", providerLeaseId);
const actor = { type: "user" as const, id: null };

/**
 * A task whose agent writes `file` and finishes, on an environment whose next sandbox fails its
 * first three exports (one finalization attempt's tries, R-RR-1): the run ends the live path with
 * a retryable finalization and its sandbox stopped and retained.
 */
async function retryableRun(options: { policy: "reuse_by_environment" | "ephemeral"; files: Record<string, string>; file: string; content: string }) {
  const task = await world.task({ policy: options.policy, files: options.files, script: `printf '${options.content}' > ${options.file} && ${submitResult(RESULT_DONE)}` });
  await world.db.environment.update({ where: { id: task.environmentId }, data: { config: { faults: { failExports: 3 } } } });
  const runId = await world.runOnce(task);
  // Later sandboxes of the environment export normally (the faults are armed at acquisition).
  await world.db.environment.update({ where: { id: task.environmentId }, data: { config: {} } });
  const s = await world.state(runId);
  expect(s.run.status).toBe("running");
  expect(s.coordinator).toMatchObject({ phase: "retryable_failure", failureCode: "provider_fault_injected" });
  expect(s.leases).toHaveLength(1);
  const lease = s.leases[0]!;
  expect(lease).toMatchObject({ status: "released", leasePolicy: options.policy });
  return { task, runId, lease };
}

/** The reconciler's retry of `runId`, made due now. */
async function retry(task: Task, runId: string): Promise<string> {
  await world.db.nativeRunFinalization.update({ where: { runId }, data: { nextAttemptAt: new Date(Date.now() - 1000) } });
  return finalizationSweep({ ...world.deps(), executesHere: () => false }).handle({ runId, companyId: task.companyId });
}

describe("a sandbox whose run's finalization is unsettled stays that run's", () => {
  it("R-ORP-3: another task's run on the same reuse_by_environment environment and execution workspace does not reuse the lease of a run whose finalization is retryable; the retry exports that run's own sandbox and commits its own edits", async () => {
    const first = await retryableRun({ policy: "reuse_by_environment", files: { "shared.txt": "host\n" }, file: "a.txt", content: "first run edit\\n" });
    const held = first.lease;
    expect(await readFile(path.join(sandboxRoot(held.providerLeaseId!), "workspace", "a.txt"), "utf8")).toBe("first run edit\n");

    // Another task on the same environment and execution workspace.
    const second = await world.task({ environmentId: first.task.environmentId, workspaceId: first.task.workspaceId, script: `printf 'second run edit\\n' > b.txt && ${submitResult(RESULT_DONE)}` });
    const secondRun = await world.runOnce(second);
    const s2 = await world.state(secondRun);
    expect(s2.run.status).toBe("succeeded");
    expect(s2.events.find((e) => e.code === "lease.acquired")?.payload).toMatchObject({ reused: false });
    expect(s2.leases.map((l) => l.id)).not.toContain(held.id);
    // The first run's sandbox was neither reseeded nor rebound.
    expect(await world.db.environmentLease.findUniqueOrThrow({ where: { id: held.id } })).toMatchObject({ runId: first.runId, status: "released" });
    expect(await readFile(path.join(sandboxRoot(held.providerLeaseId!), "workspace", "a.txt"), "utf8")).toBe("first run edit\n");

    expect(await retry(first.task, first.runId)).toBe("committed");
    const done = await world.state(first.runId);
    expect(done.run.status).toBe("succeeded");
    expect(done.events.filter((e) => e.code === "workspace.export_started").map((e) => (e.payload as { leaseId: string }).leaseId)).toEqual([held.id, held.id]);
    // R-EX-1 (issue 21 defect B): the local provider exports its stopped sandbox as it is
    // (exportWhileStopped): no resume before the retry, and the stop receipt is the first one still.
    expect(done.codes).not.toContain("workspace.sandbox_resuming");
    const kept = await world.db.environmentLease.findUniqueOrThrow({ where: { id: held.id } });
    expect(kept.status).toBe("released");
    expect(readStopReceipt(kept.metadata)).toEqual(readStopReceipt(held.metadata));
    expect(await readTree(first.task.hostPath)).toEqual({
      "a.txt": { type: "file", content: "first run edit\n" },
      "b.txt": { type: "file", content: "second run edit\n" },
      "shared.txt": { type: "file", content: "host\n" },
    });
  });

  it("R-EX-6: an export from a lease no longer bound to the finalizing run (rebound to another run still working) is refused, with nothing written to the host", async () => {
    const first = await retryableRun({ policy: "reuse_by_environment", files: { "shared.txt": "host\n" }, file: "a.txt", content: "first run edit\\n" });
    const lease = first.lease;
    // What the reuse of an unheld lease did before the held-lease rule: another task's run took
    // the lease over and works in it; its file is not submitted.
    const second = await world.task({ environmentId: first.task.environmentId, workspaceId: first.task.workspaceId });
    const secondRun = await world.wake(second);
    await world.db.heartbeatRun.update({ where: { id: secondRun }, data: { status: "running", startedAt: new Date() } });
    await world.db.environmentLease.update({ where: { id: lease.id }, data: { runId: secondRun, issueId: second.issueId, status: "active" } });
    await writeFile(path.join(sandboxRoot(lease.providerLeaseId!), "workspace", "unsubmitted.txt"), "second run, not submitted\n");
    const hostBefore = await readTree(first.task.hostPath);

    expect(await retry(first.task, first.runId)).toBe("terminal_failure");
    const s = await world.state(first.runId);
    expect(s.coordinator).toMatchObject({ phase: "terminal_failure", failureCode: "finalization_lease_not_bound" });
    expect(s.run.status).toBe("failed");
    expect(s.operations.filter((o) => o.phase === "workspace_finalize").map((o) => [o.status, o.errorCode])).toEqual([
      ["failed", "provider_fault_injected"],
      ["failed", "finalization_lease_not_bound"],
    ]);
    expect(s.codes.filter((c) => c === "workspace.export_started")).toHaveLength(1);
    expect(await readTree(first.task.hostPath)).toEqual(hostBefore);
    // The other run's lease and sandbox are as it left them.
    expect(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ runId: secondRun, status: "active" });
    expect(await readFile(path.join(sandboxRoot(lease.providerLeaseId!), "workspace", "unsubmitted.txt"), "utf8")).toBe("second run, not submitted\n");
  });

  it("R-EX-4: an ephemeral sandbox stopped during a transient retry is listed as retained while its finalization is unsettled, and destroyed after the retry commits", async () => {
    const { task, runId, lease } = await retryableRun({ policy: "ephemeral", files: {}, file: "e.txt", content: "ephemeral edit\\n" });
    const listed = (await listRetainedSandboxes(world.db, { companyId: task.companyId, limit: 500 })).sandboxes.find((s) => s.leaseId === lease.id);
    expect(listed).toMatchObject({ runId, leaseStatus: "released", leasePolicy: "ephemeral", stopped: true });
    expect(listed?.reasons.map((r) => r.kind)).toEqual(["finalization_unsettled"]);

    expect(await retry(task, runId)).toBe("committed");
    expect(await readTree(task.hostPath)).toEqual({ "e.txt": { type: "file", content: "ephemeral edit\n" } });
    // Destroyed after the host-copy barrier, as its policy says for a committed run.
    expect(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: "destroyed" });
    expect(existsSync(sandboxRoot(lease.providerLeaseId!))).toBe(false);
    expect((await listRetainedSandboxes(world.db, { companyId: task.companyId, limit: 500 })).sandboxes.map((s) => s.leaseId)).not.toContain(lease.id);
  });

  it("R-ORP-3: Discard of a sandbox kept for an unsettled finalization is refused (copyback_pending) with nothing destroyed; the retry then commits the run's own edits", async () => {
    const { task, runId, lease } = await retryableRun({ policy: "ephemeral", files: { "keep.txt": "host\n" }, file: "e.txt", content: "not given up\\n" });
    await expect(
      discardRetainedSandbox({ db: world.db, registry: world.registry }, {
        companyId: task.companyId,
        leaseId: lease.id,
        providerLeaseId: lease.providerLeaseId!,
        acknowledgedActionIds: [],
        reason: "the operator gives the files up",
        actor,
      }),
    ).rejects.toMatchObject({ code: "copyback_pending", details: { phase: "retryable_failure" } });
    expect(existsSync(sandboxRoot(lease.providerLeaseId!))).toBe(true);
    expect(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: lease.status });

    expect(await retry(task, runId)).toBe("committed");
    expect(await readTree(task.hostPath)).toEqual({ "keep.txt": { type: "file", content: "host\n" }, "e.txt": { type: "file", content: "not given up\n" } });
  });

  it("R-EX-4: a controller that committed the retry and died before its release by policy: the settled-run-leases sweep destroys the released ephemeral sandbox after the barrier", async () => {
    const { task, runId, lease } = await retryableRun({ policy: "ephemeral", files: {}, file: "e.txt", content: "committed, then the controller died\\n" });
    await world.db.nativeRunFinalization.update({ where: { runId }, data: { nextAttemptAt: new Date(Date.now() - 1000) } });
    // The retry commits; its controller dies before it releases the lease by policy.
    expect((await finalizeRun(world.deps(), { runId })).kind).toBe("committed");
    const dead = await deadIdentity();
    await world.db.heartbeatRun.update({ where: { id: runId }, data: { controllerPid: dead.pid, controllerProcessStart: dead.startTime, controllerBootId: dead.bootId, controllerHost: dead.host } });
    expect(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: "released" });

    const sweep = settledRunLeasesSweep({ db: world.db, registry: world.registry });
    const units = (await sweep.due(500)).filter((u) => u.leaseId === lease.id);
    expect(units).toEqual([{ leaseId: lease.id, runId }]);
    expect(await sweep.handle(units[0]!)).toBe("destroyed");
    expect(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: "destroyed" });
    expect(existsSync(sandboxRoot(lease.providerLeaseId!))).toBe(false);
    expect(await readTree(task.hostPath)).toEqual({ "e.txt": { type: "file", content: "committed, then the controller died\n" } });
    expect((await sweep.due(500)).map((u) => u.leaseId)).not.toContain(lease.id);
  });
});
