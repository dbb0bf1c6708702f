// The file recovery family on Daytona (the real plugin, the emulator as its endpoint, real
// PostgreSQL, executeRun as the worker drives it): a run that fails before its result pins the exact
// Daytona sandbox and opens one file-recovery obligation in the transaction that fails the run,
// before the provider cleanup; the cleanup stops and retains the ephemeral sandbox (auto-delete
// disabled and read back, R-DT-1), never destroys it, and the agent's partial files are kept.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { confirmedStopReceipt } from "../../src/leases/lease-metadata";
import { readFileRecoveryEvidence } from "../../src/records/actions";
import { FILE_RECOVERY_CAUSE } from "../../src/records/causes";
import { readTree, submitResult } from "../dispatch/dispatch-fixture";
import { useDaytonaDispatch } from "../dispatch/daytona-dispatch-fixture";

const world = useDaytonaDispatch();

async function retainedState(runId: string) {
  const state = await world.state(runId);
  expect(state.leases).toHaveLength(1);
  const lease = state.leases[0]!;
  const actions = await world.db.issueRecoveryAction.findMany({ where: { runId } });
  const record = world.emulator.sandbox(world.sandboxIdOf(lease.providerLeaseId));
  return { state, lease, actions, record };
}

describe("file recovery on Daytona (emulator)", { timeout: 120_000 }, () => {
  it("R-FO-1 R-FO-2 R-FO-3 R-DT-1 an agent that exits without a result: the run fails, the exact Daytona sandbox is pinned with one obligation before the cleanup, which stops and retains it (auto-delete disabled) with the partial file", async () => {
    const task = await world.daytonaTask({ config: { autoDeleteMinutes: 15 }, files: { "README.md": "host\n" }, script: "mkdir -p work && echo 'half done' > work/partial.txt && exit 3" });
    const runId = await world.runOnce(task);
    const { state, lease, actions, record } = await retainedState(runId);
    expect(state.run).toMatchObject({ status: "failed", errorCode: "agent_exit_nonzero" });
    expect(state.operations.map((o) => `${o.phase}:${o.status}`)).toEqual(["workspace_prepare:succeeded"]);
    // Ephemeral, yet not destroyed: stopped and retained by the stop-only intent.
    expect(lease).toMatchObject({ status: "released", leasePolicy: "ephemeral", pluginId: "builtin.daytona" });
    expect(confirmedStopReceipt(lease.metadata, lease).kind).toBe("confirmed");
    expect([record.state, record.autoDeleteInterval]).toEqual(["stopped", -1]);
    expect(await readFile(path.join(world.sandboxWorkspace(lease.providerLeaseId), "work/partial.txt"), "utf8")).toBe("half done\n");
    expect(await readTree(task.hostPath)).toEqual({ "README.md": { type: "file", content: "host\n" } });
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ cause: FILE_RECOVERY_CAUSE, ownerType: "board", status: "active", leaseId: lease.id });
    expect(readFileRecoveryEvidence(actions[0]!.evidence)).toMatchObject({
      runId,
      leaseId: lease.id,
      providerLeaseId: lease.providerLeaseId,
      pluginId: "builtin.daytona",
      origin: "agent_exited",
      failureCode: "agent_exit_nonzero",
      pin: "pinned",
    });
    expect(state.codes.indexOf("run.files_retained")).toBeGreaterThan(-1);
    expect(state.codes.indexOf("run.files_retained")).toBeLessThan(state.codes.indexOf("run.failed"));
    expect(state.codes.indexOf("run.failed")).toBeLessThan(state.codes.indexOf("lease.released"));
  });

  it("R-FO-1 R-FO-3 R-FO-6 the result file's transfer breaks (Daytona truncates every download): a provider failure before the result, not an export; the sandbox with the agent's files is pinned and kept", async () => {
    const task = await world.daytonaTask({ files: { "a.txt": "host a\n" }, script: `printf 'agent edit\\n' > a.txt && ${submitResult()}` });
    for (let i = 0; i < 50; i += 1) world.emulator.faults.once({ op: "download", kind: "truncate", afterBytes: 3 });
    const runId = await world.runOnce(task);
    world.emulator.faults.clear();
    const { state, lease, actions, record } = await retainedState(runId);
    expect(state.run.status).toBe("failed");
    expect(String(state.run.errorCode)).toMatch(/^(provider_daytona_|transfer_dropped$)/);
    // R-FO-6: no accepted result, so no export-retry path: one file-recovery obligation only.
    expect(state.coordinator?.resultId ?? null).toBeNull();
    expect(actions.map((a) => a.cause)).toEqual([FILE_RECOVERY_CAUSE]);
    expect(readFileRecoveryEvidence(actions[0]!.evidence)).toMatchObject({ origin: "provider_failure", pluginId: "builtin.daytona", pin: "pinned", leaseId: lease.id });
    expect(lease.status).toBe("released");
    expect(confirmedStopReceipt(lease.metadata, lease).kind).toBe("confirmed");
    expect(record.state).toBe("stopped");
    expect(record.autoDeleteInterval).toBe(-1);
    expect(await readFile(path.join(world.sandboxWorkspace(lease.providerLeaseId), "a.txt"), "utf8")).toBe("agent edit\n");
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "host a\n" } });
  });
});
