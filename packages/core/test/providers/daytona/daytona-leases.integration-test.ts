// The Daytona plugin under copyback's own lease flow, on a real PostgreSQL and the emulator:
// acquisition records the sandbox and writes the R-DT-2 sentinel; stop-and-retain (R-SO-1)
// disables auto-delete and reads it back first (R-DT-1): unapplied, the lease stays
// pending_cleanup and the sandbox is neither stopped nor deleted, through the restart sweep;
// then it stops with a matching receipt, and a sandbox Daytona archived on its own is accepted
// as stopped (R-DT-4).
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { acquireLease, releaseLeaseByPolicy } from "../../../src/leases/index";
import { leaseCleanupSweep } from "../../../src/recovery/sweeps/lease-cleanup-sweep";
import { selfIdentity } from "../../recovery/recovery-fixture";
import { buildLeaseWorld, registryOf } from "../../leases/lease-fixture";
import { useDaytona } from "./daytona-fixture";

const db = useTestDatabase();
const w = useDaytona();

async function daytonaWorld(extra: Record<string, unknown> = {}, policy: "retain_on_failure" | "ephemeral" = "retain_on_failure") {
  const world = await buildLeaseWorld(db.prisma(), { pluginId: "builtin.daytona" });
  await db.prisma().environment.update({ where: { id: world.environment.id }, data: { provider: "daytona", config: w().config(extra) as object } });
  const runId = await world.newRun();
  const registry = registryOf(w().provider);
  const acquired = await acquireLease(db.prisma(), registry, world.acquireInput(runId, { policy }));
  const sandboxId = /^daytona:([^?]+)/.exec(acquired.lease.providerLeaseId ?? "")?.[1] ?? "";
  return { world, runId, registry, lease: acquired.lease, sandboxId };
}

const row = (id: string) => db.prisma().environmentLease.findUniqueOrThrow({ where: { id } });

describe("daytona plugin under the lease flow", { timeout: 60_000 }, () => {
  it("R-DT-2 a new ephemeral allocation gets its sentinel written in the sandbox at acquisition, the same the lease records", async () => {
    const { runId, lease } = await daytonaWorld({}, "ephemeral");
    const handle = { leaseId: lease.id, pluginId: "builtin.daytona", providerLeaseId: lease.providerLeaseId! };
    const recorded = ((await row(lease.id)).metadata as { workspaceSentinel?: unknown }).workspaceSentinel;
    expect(recorded).toMatchObject({ leaseId: lease.id, runId, providerLeaseId: lease.providerLeaseId });
    expect(await w().provider.readWorkspaceSentinel!(handle)).toEqual(recorded);
  });

  it("R-DT-1 an unapplied auto-delete disable leaves cleanup pending through the restart sweep, then the stop is confirmed", async () => {
    const { runId, registry, lease, sandboxId } = await daytonaWorld({ autoDeleteMinutes: 30 });
    const handle = { leaseId: lease.id, pluginId: "builtin.daytona", providerLeaseId: lease.providerLeaseId! };
    // A retained (not ephemeral) allocation gets no sentinel (R-DT-2 is for new ephemeral ones).
    expect(await w().provider.readWorkspaceSentinel!(handle)).toBeNull();

    w().emulator.faults.once({ op: "autodelete", kind: "ignored" });
    const first = await releaseLeaseByPolicy(db.prisma(), registry, { leaseId: lease.id, runId, outcome: "failed" });
    expect(first).toMatchObject({ kind: "pending_cleanup", code: "auto_delete_unconfirmed" });
    const record = w().emulator.sandbox(sandboxId);
    expect([record.state, record.autoDeleteInterval]).toEqual(["started", 30]);
    expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", metadata: { failure: { code: "auto_delete_unconfirmed" }, sandboxStopAndRetain: { pluginId: "builtin.daytona" } } });

    // A restarted controller's sweep, Daytona ignoring the setting again: still pending, nothing stopped or deleted.
    w().emulator.faults.once({ op: "autodelete", kind: "ignored" });
    await db.prisma().environmentLease.update({ where: { id: lease.id }, data: { nextCleanupAt: new Date(Date.now() - 1000) } });
    const sweep = leaseCleanupSweep({ db: db.prisma(), registry, controller: await selfIdentity() });
    await sweep.handle((await sweep.due(500)).find((u) => sweep.idOf(u) === lease.id)!);
    expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 2 });
    expect(w().emulator.sandbox(sandboxId).state).toBe("started");

    // Applied at last: disabled, read back, stopped, receipt matching (R-SO-2).
    await db.prisma().environmentLease.update({ where: { id: lease.id }, data: { nextCleanupAt: new Date(Date.now() - 1000) } });
    await sweep.handle((await sweep.due(500)).find((u) => sweep.idOf(u) === lease.id)!);
    expect(await row(lease.id)).toMatchObject({
      status: "released",
      metadata: { sandboxStopAndRetainReceipt: { method: "environmentStopLease", pluginId: "builtin.daytona", providerLeaseId: lease.providerLeaseId } },
    });
    expect([record.state, record.autoDeleteInterval]).toEqual(["stopped", -1]);
  });

  it("R-DT-4 a sandbox Daytona archived behind the controller's back, auto-delete confirmed disabled, is recorded as stopped with its files kept", async () => {
    const { runId, registry, lease, sandboxId } = await daytonaWorld();
    const record = w().emulator.sandbox(sandboxId);
    const kept = join(w().root, "emulator", sandboxId, "copyback/workspace/kept.txt");
    await writeFile(kept, "the agent's work");
    w().emulator.sandboxes.act(record, "stop");
    await new Promise((resolve) => setTimeout(resolve, 80));
    w().emulator.archiveBehindBack(sandboxId);
    const outcome = await releaseLeaseByPolicy(db.prisma(), registry, { leaseId: lease.id, runId, outcome: "failed" });
    expect(outcome).toMatchObject({ kind: "stopped_and_retained", receipt: { method: "environmentStopLease", pluginId: "builtin.daytona" } });
    expect((await row(lease.id)).status).toBe("released");
    expect(record.state).toBe("archived");
    expect(await readFile(kept, "utf8")).toBe("the agent's work");
  });
});
