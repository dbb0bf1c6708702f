// The coordinator's own retry of an EPHEMERAL Daytona sandbox (issue 21 defect B, R-DT-2): the first
// attempt fails transiently and its release stops the sandbox; the second attempt resumes it
// (finalization/resume-for-export.ts) and, because Daytona reads no file of a stopped sandbox, reads
// the acquisition-time sentinel only after the resume and before any export. The real plugin, the
// emulator as its endpoint, real PostgreSQL.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { leaseOutcomeAfterFinalize } from "../../src/finalization/finalize-outcome-policy";
import { readStopReceipt } from "../../src/leases/lease-metadata";
import { releaseLeaseByPolicy } from "../../src/leases/release-lease";
import { RESULT_DONE, readTree, submitResult } from "../dispatch/dispatch-fixture";
import { useDaytonaDispatch } from "../dispatch/daytona-dispatch-fixture";

const world = useDaytonaDispatch();

const HOST_BEFORE = { "a.txt": { type: "file", content: "host a\n" } };

/** An ephemeral run whose first coordinator attempt fails (nine 503s: its three tries); the live path stopped the sandbox. */
async function stoppedAfterFirstAttempt() {
  const task = await world.daytonaTask({ policy: "ephemeral", files: { "a.txt": "host a\n" }, script: `printf 'agent edit\\n' > a.txt && ${submitResult(RESULT_DONE)}` });
  let exports = 0;
  world.beforeExport = () => {
    exports += 1;
    if (exports === 1) for (let i = 0; i < 9; i += 1) world.emulator.faults.once({ op: "upload", kind: "status", status: 503 });
  };
  const runId = await world.runOnce(task);
  const coordinator = await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } });
  expect(coordinator.phase).toBe("retryable_failure");
  const [lease] = await world.db.environmentLease.findMany({ where: { runId } });
  expect(lease!.status).toBe("released");
  const sandboxId = world.sandboxIdOf(lease!.providerLeaseId);
  expect(world.emulator.sandbox(sandboxId).state).toBe("stopped");
  const due = () => new Date((coordinator.nextAttemptAt ?? new Date()).getTime() + 1);
  return { task, runId, lease: lease!, sandboxId, due, exports: () => exports };
}

describe("the coordinator's resume of an ephemeral Daytona sandbox", { timeout: 180_000 }, () => {
  it("R-DT-2 R-EX-1 the sentinel is verified after the resume; the second attempt commits and the sandbox is destroyed only after the commit", async () => {
    const { task, runId, lease, sandboxId, due } = await stoppedAfterFirstAttempt();
    const outcome = await finalizeRun({ ...world.deps(), now: due }, { runId });
    expect(outcome).toMatchObject({ kind: "committed" });
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "agent edit\n" } });
    expect((await world.state(runId)).codes).toContain("workspace.sandbox_resuming");
    // Until the release the sandbox is kept (running, under the stop-only intent); then destroyed.
    expect(world.emulator.sandbox(sandboxId).state).toBe("started");
    expect(await releaseLeaseByPolicy(world.db, world.registry, { leaseId: lease.id, runId, outcome: leaseOutcomeAfterFinalize(outcome)! })).toMatchObject({ kind: "destroyed" });
    expect(() => world.emulator.sandbox(sandboxId)).toThrow();
  });

  it("R-DT-2 R-EX-5 a sandbox whose sentinel differs after the coordinator's resume is not the original: nothing exported, the attempt fails final (provider_identity_mismatch), the sandbox stopped and retained again with its files and the hold opened", async () => {
    const { task, runId, lease, sandboxId, due, exports } = await stoppedAfterFirstAttempt();
    const file = path.join(path.dirname(world.sandboxWorkspace(lease.providerLeaseId)), "sentinel.json");
    const forged = JSON.parse(await readFile(file, "utf8"));
    await writeFile(file, JSON.stringify({ ...forged, nonce: "0".repeat(64) }));
    const before = exports();

    const outcome = await finalizeRun({ ...world.deps(), now: due }, { runId });
    expect(outcome).toMatchObject({ kind: "terminal_failure", code: "provider_identity_mismatch" });
    expect(exports()).toBe(before);
    expect(await readTree(task.hostPath)).toEqual(HOST_BEFORE);
    const s = await world.state(runId);
    expect(s.codes).toEqual(expect.arrayContaining(["workspace.sandbox_resuming", "workspace.sandbox_resume_failed"]));
    expect(s.run.status).toBe("failed");
    // Stopped again by the attempt's own intent (a new receipt), never destroyed; the release keeps it.
    const stopped = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(stopped.status).toBe("released");
    const receipt = readStopReceipt(stopped.metadata);
    const first = readStopReceipt(lease.metadata);
    expect(receipt.kind === "present" && first.kind === "present" && receipt.value.requestId !== first.value.requestId).toBe(true);
    expect(await releaseLeaseByPolicy(world.db, world.registry, { leaseId: lease.id, runId, outcome: leaseOutcomeAfterFinalize(outcome)! })).toMatchObject({ kind: "stopped_and_retained" });
    const record = world.emulator.sandbox(sandboxId);
    expect([record.state, record.autoDeleteInterval]).toEqual(["stopped", -1]);
    expect(await readFile(path.join(world.sandboxWorkspace(lease.providerLeaseId), "a.txt"), "utf8")).toBe("agent edit\n");
    expect(await world.db.issueRecoveryAction.count({ where: { runId, status: "active" } })).toBe(1);
  });
});
