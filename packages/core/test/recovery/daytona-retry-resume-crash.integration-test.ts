// The coordinator's own retry on Daytona (issue 21 defect B), when its controller dies between the
// resume and the export: the real plugin, the emulator as its endpoint, real PostgreSQL. The first
// attempt fails transiently and its release stops the sandbox; the second attempt resumes it under
// a stop-only intent (finalization/resume-for-export.ts) and then hangs in its first export call,
// which is where a dead controller leaves its records. The restart sweep must not take the stop
// while the attempt's 15-minute claim is live, and once it expired it stops the sandbox again by
// that exact intent with the agent's files kept (R-EX-5).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { readStopIntent, readStopReceipt } from "../../src/leases/lease-metadata";
import { leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { readTree, RESULT_DONE, submitResult } from "../dispatch/dispatch-fixture";
import { useDaytonaDispatch } from "../dispatch/daytona-dispatch-fixture";

const world = useDaytonaDispatch();

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("the coordinator's resume on Daytona, its controller dying before the export", { timeout: 180_000 }, () => {
  it("R-EX-5 R-EX-1 a controller that dies between the resume and the export leaves the lease pending_cleanup with the stop-only intent under its claim; the sweep leaves it while the claim is live and stops the sandbox by that intent once it expired, files kept", async () => {
    const task = await world.daytonaTask({
      policy: "reuse_by_environment",
      files: { "a.txt": "host a\n" },
      script: `printf 'agent edit\\n' > a.txt && ${submitResult(RESULT_DONE)}`,
    });
    let exports = 0;
    world.beforeExport = () => {
      exports += 1;
      // Attempt 1: its three tries, three calls each, all answered 503 (a transient failure).
      if (exports === 1) for (let i = 0; i < 9; i += 1) world.emulator.faults.once({ op: "upload", kind: "status", status: 503 });
      // Attempt 2 (after the resume): its first call never answers, as if its controller had died.
      if (exports === 4) world.emulator.faults.once({ op: "upload", kind: "hang" });
    };
    const runId = await world.runOnce(task);
    const coordinator = await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } });
    expect(coordinator.phase).toBe("retryable_failure");
    const [stopped] = await world.db.environmentLease.findMany({ where: { runId } });
    const sandboxId = world.sandboxIdOf(stopped!.providerLeaseId);
    expect(stopped!.status).toBe("released");
    expect(world.emulator.sandbox(sandboxId).state).toBe("stopped");
    const oldReceipt = readStopReceipt(stopped!.metadata);
    expect(oldReceipt.kind).toBe("present");

    const attempt = finalizeRun({ ...world.deps(), now: () => new Date((coordinator.nextAttemptAt ?? new Date()).getTime() + 1) }, { runId });
    await until("the second attempt's export", () => exports >= 4);

    // What a controller that died here leaves: the resumed sandbox, and the lease it pinned first.
    const left = await world.db.environmentLease.findUniqueOrThrow({ where: { id: stopped!.id } });
    expect(world.emulator.sandbox(sandboxId).state).toBe("started");
    expect(left.status).toBe("pending_cleanup");
    const intent = readStopIntent(left.metadata, left);
    expect(intent).toMatchObject({ kind: "present", value: { leaseId: left.id, runId, providerLeaseId: left.providerLeaseId, pluginId: "builtin.daytona" } });
    expect(readStopReceipt(left.metadata).kind).not.toBe("present");
    expect(left.cleanupClaimedBy).toBe(`finalization:${runId}`);
    expect(left.cleanupClaimedUntil!.getTime()).toBeGreaterThan(Date.now() + 10 * 60_000);

    // A restarted controller's sweep: the claim is live (an in-flight attempt), so it is not taken.
    const sweep = leaseCleanupSweep({ db: world.db, registry: world.freshRegistry() });
    expect((await sweep.due(50)).map((u) => u.leaseId)).not.toContain(left.id);
    expect(world.emulator.sandbox(sandboxId).state).toBe("started");

    // Fifteen minutes later (moved into the past, not waited for): the sweep stops it by that intent.
    await world.db.$executeRaw`UPDATE environment_leases SET cleanup_claimed_until = now() - interval '1 second' WHERE id = ${left.id}::uuid`;
    const due = (await sweep.due(50)).filter((u) => u.leaseId === left.id);
    expect(due).toHaveLength(1);
    expect(await sweep.handle(due[0]!)).toBe("stopped_and_retained");
    const after = await world.db.environmentLease.findUniqueOrThrow({ where: { id: left.id } });
    expect(after.status).toBe("released");
    expect(readStopReceipt(after.metadata)).toMatchObject({ kind: "present", value: { requestId: intent.kind === "present" ? intent.value.requestId : "", method: "environmentStopLease" } });
    const record = world.emulator.sandbox(sandboxId);
    expect([record.state, record.autoDeleteInterval]).toEqual(["stopped", -1]);
    expect(await readFile(path.join(world.sandboxWorkspace(left.providerLeaseId), "a.txt"), "utf8")).toBe("agent edit\n");

    // The hung call answers at last (the process a real crash would have ended): its attempt meets
    // the sandbox stopped again and fails before any host write; the stop it left stays.
    world.emulator.faults.releaseHangs();
    expect(await attempt).toMatchObject({ kind: "retryable_failure" });
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "host a\n" } });
    expect(await world.db.environmentLease.findUniqueOrThrow({ where: { id: left.id } })).toMatchObject({ status: "released", cleanupClaimedBy: null });
    expect(world.emulator.sandbox(sandboxId).state).toBe("stopped");
  });
});
