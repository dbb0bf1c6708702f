// R-LG-1 through the whole executor on a real local sandbox: a legacy agent works; a board Stop
// cancels the run, pins and stops its ephemeral sandbox and releases it (stop-and-retain receipt,
// the Stop's acknowledgement naming the lease); the legacy adapter's copy-back then fails (a host
// edit conflicts with the agent's) and its late report keeps that exact released allocation for
// repair: excluded from reuse, a board repair hold, the run still cancelled, the task's status as
// the Stop left it.
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { executeRun } from "../../src/dispatch/execute-run";
import { readRetainedSource } from "../../src/leases/retained-source";
import { readLegacyRepairEvidence } from "../../src/records/actions";
import { LEGACY_COPYBACK_REPAIR_CAUSE } from "../../src/records/causes";
import { readStoppedExecutionReceipt } from "../../src/records/stopped-execution-receipt";
import { stopRun } from "../../src/runs/stop-run";
import { DispatchWorld, PLAIN_LOCAL_PLUGIN } from "./dispatch-fixture";

const database = useTestDatabase({ poolSize: 10 });
const world = new DispatchWorld(database);
beforeAll(() => world.setUp());
afterAll(() => world.tearDown());

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a legacy run stopped by the board", () => {
  it("R-LG-1 a copy-back failure reported after the Stop released the ephemeral lease keeps that exact allocation for repair, changing no run or task status", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, files: { "edit-me.txt": "original\n" }, adapterConfig: { adapter: "legacy", timeoutSeconds: 120 } });
    await world.db.agent.update({
      where: { id: task.agentId },
      data: {
        adapterConfig: { adapter: "legacy", timeoutSeconds: 120, env: { HOST_TARGET: task.hostPath } },
        command: ["/bin/sh", "-c", `printf 'agent\\n' > edit-me.txt && printf 'host\\n' > "$HOST_TARGET/edit-me.txt" && sleep 600`],
      },
    });
    const runId = await world.wake(task);
    const mine = (await world.claim(1)).find((r) => r.runId === runId);
    if (!mine) throw new Error("run not claimed");
    const execution = executeRun(world.deps({ stopPollMs: 100 }), mine, new AbortController().signal);
    await waitFor("the agent to start", async () => {
      const run = await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
      return (run.runnerProfileJson as { agentProcess?: unknown }).agentProcess ?? null;
    });
    // Both edits are made before the Stop (the host file changed under the run's baseline).
    await waitFor("the host edit", async () => readFile(`${task.hostPath}/edit-me.txt`, "utf8").then((t) => t === "host\n", () => false));
    expect(await stopRun(world.db, { companyId: task.companyId, runId, actor: { type: "user", id: null } })).toMatchObject({ kind: "stop_requested" });
    await execution;

    const s = await world.state(runId);
    expect(s.run).toMatchObject({ status: "cancelled", runtimeMode: "legacy" });
    const lease = s.leases[0]!;
    // The Stop stopped and released it; the late report left status and receipt, and excluded it from reuse.
    expect(lease).toMatchObject({ status: "released", leasePolicy: "retain_on_failure" });
    expect(lease.metadata).toMatchObject({ sandboxStopAndRetainReceipt: { providerLeaseId: lease.providerLeaseId } });
    expect(readRetainedSource(lease.metadata)).toMatchObject({ reason: "legacy_late_copyback_failure", originalPolicy: "ephemeral", runId });
    expect(readStoppedExecutionReceipt(s.run.runnerProfileJson)).toMatchObject({ leaseId: lease.id });
    const actions = await world.db.issueRecoveryAction.findMany({ where: { issueId: task.issueId, cause: LEGACY_COPYBACK_REPAIR_CAUSE } });
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ status: "active", ownerType: "board", runId, leaseId: lease.id });
    expect(readLegacyRepairEvidence(actions[0]?.evidence)).toMatchObject({ path: "late_report" });
    expect(s.codes).toContain("legacy.late_report_recorded");
    // The host keeps the person's edit: nothing of the cancelled run was written over it.
    expect(await readFile(`${task.hostPath}/edit-me.txt`, "utf8")).toBe("host\n");
  });
});
