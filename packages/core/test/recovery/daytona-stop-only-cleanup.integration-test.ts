// The stop-only cleanup family on Daytona (the real plugin, the emulator as its endpoint, real
// PostgreSQL, executeRun's release and the restart sweep): a reusable run commits, its release
// stores the stop-only intent, and Daytona does not apply the auto-delete disable: the stop is
// unconfirmed, the lease stays pending_cleanup and the sandbox is neither stopped nor deleted
// (R-DT-1). A fresh controller's sweep then stops it with the disable read back, or accepts the
// archive Daytona made on its own (R-DT-4), and the sandbox keeps the committed bytes.
import { describe, expect, it } from "vitest";
import { readStopReceipt } from "../../src/leases/lease-metadata";
import { leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { readTree, submitResult } from "../dispatch/dispatch-fixture";
import { useDaytonaDispatch } from "../dispatch/daytona-dispatch-fixture";

const world = useDaytonaDispatch();

const HOST_AFTER = { "a.txt": { type: "file", content: "agent edit\n" }, "b.txt": { type: "file", content: "b\n" }, "new.txt": { type: "file", content: "new\n" } };

/** A reusable run that commits while Daytona ignores every auto-delete disable: its release stays unconfirmed. */
async function committedWithUnconfirmedStop() {
  const task = await world.daytonaTask({
    policy: "reuse_by_environment",
    config: { autoDeleteMinutes: 30 },
    files: { "a.txt": "host a\n", "b.txt": "b\n" },
    script: `printf 'agent edit\\n' > a.txt && printf 'new\\n' > new.txt && ${submitResult()}`,
  });
  // Armed at the export, after the acquisition set the environment's own auto-delete.
  world.beforeExport = () => {
    for (let i = 0; i < 20; i += 1) world.emulator.faults.once({ op: "autodelete", kind: "ignored" });
  };
  const runId = await world.runOnce(task);
  world.beforeExport = null;
  world.emulator.faults.clear();
  const s = await world.state(runId);
  const lease = s.leases[0]!;
  const sandboxId = world.sandboxIdOf(lease.providerLeaseId);
  return { task, runId, s, lease, sandboxId, record: world.emulator.sandbox(sandboxId) };
}

/** As the restart sweep finds the lease once its backoff and any claim passed (moved into the past, not waited for). */
async function sweepAfterClaimExpires(leaseId: string) {
  await world.db.$executeRaw`UPDATE environment_leases SET next_cleanup_at = now() - interval '1 second', cleanup_claimed_until = CASE WHEN cleanup_claimed_until IS NULL THEN NULL ELSE now() - interval '1 second' END WHERE id = ${leaseId}::uuid`;
  const sweep = leaseCleanupSweep({ db: world.db, registry: world.freshRegistry() });
  const due = (await sweep.due(50)).filter((u) => u.leaseId === leaseId);
  expect(due).toHaveLength(1);
  return sweep.handle(due[0]!);
}

describe("stop-only cleanup on Daytona (emulator)", { timeout: 120_000 }, () => {
  it("R-DT-1 R-SO-1 R-SO-2 an auto-delete disable Daytona did not apply leaves the release pending (no stop, no delete); a fresh sweep stops it with the disable read back and the committed bytes kept", async () => {
    const { task, s, lease, record } = await committedWithUnconfirmedStop();
    expect(s.run.status).toBe("succeeded");
    expect(s.coordinator?.phase).toBe("committed");
    expect(await readTree(task.hostPath)).toEqual(HOST_AFTER);
    // R-SO-1: the intent is stored; R-DT-1: unconfirmed, so no receipt, and no fallback stop or delete.
    expect(lease.status).toBe("pending_cleanup");
    expect(lease.metadata).toHaveProperty("sandboxStopAndRetain");
    expect(readStopReceipt(lease.metadata).kind).not.toBe("present");
    expect(record.state).toBe("started");
    expect(record.autoDeleteInterval).toBe(30);

    expect(await sweepAfterClaimExpires(lease.id)).toBe("stopped_and_retained");
    const after = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(after.status).toBe("released");
    expect(after.metadata).not.toHaveProperty("sandboxStopAndRetain");
    expect(readStopReceipt(after.metadata)).toMatchObject({ kind: "present", value: { method: "environmentStopLease", pluginId: "builtin.daytona", providerLeaseId: lease.providerLeaseId } });
    expect([record.state, record.autoDeleteInterval]).toEqual(["stopped", -1]);
    // The stopped sandbox keeps exactly what the run committed.
    expect(await readTree(world.sandboxWorkspace(lease.providerLeaseId))).toEqual(HOST_AFTER);
  });

  it("R-DT-4 R-DT-3 while cleanup is pending Daytona stops and archives the sandbox on its own: the sweep accepts the fresh archive only after the disable is read back, records it stopped, and the files are kept", async () => {
    const { lease, sandboxId, record } = await committedWithUnconfirmedStop();
    expect(lease.status).toBe("pending_cleanup");
    world.emulator.sandboxes.force(record, "stopped");
    world.emulator.archiveBehindBack(sandboxId);
    expect([record.state, record.autoDeleteInterval]).toEqual(["archived", 30]);

    expect(await sweepAfterClaimExpires(lease.id)).toBe("stopped_and_retained");
    const after = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(after.status).toBe("released");
    expect(readStopReceipt(after.metadata)).toMatchObject({ kind: "present", value: { method: "environmentStopLease", pluginId: "builtin.daytona" } });
    // Cold and kept: still archived (never started, never deleted), auto-delete now disabled.
    expect([record.state, record.autoDeleteInterval]).toEqual(["archived", -1]);
    expect(await readTree(world.sandboxWorkspace(lease.providerLeaseId))).toEqual(HOST_AFTER);
    // R-DT-3: a later sweep pass does not pick the released, confirmed-stopped allocation.
    const sweep = leaseCleanupSweep({ db: world.db, registry: world.freshRegistry() });
    expect((await sweep.due(50)).filter((u) => u.leaseId === lease.id)).toEqual([]);
    expect(world.emulator.sandbox(sandboxId).state).toBe("archived");
  });
});
