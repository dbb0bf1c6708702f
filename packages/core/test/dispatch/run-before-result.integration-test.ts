// Runs that fail before their result, through executeRun with real processes on the local
// provider (plain process groups) and the fake provider's faults (R-FO-1..4, R-FO-6): the exact
// sandbox is pinned and one file-recovery obligation opened in the transaction that fails the run,
// before the provider cleanup; the cleanup then stops and retains the sandbox with the agent's
// files (never a destroy, never a release for reuse). An owned preparation failure is settled only
// by its exact live recovery claim.
import { access, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Prisma } from "@copyback/db";
import { executeRun } from "../../src/dispatch/execute-run";
import { leaseHeldSql } from "../../src/leases/lease-holds";
import { confirmedStopReceipt } from "../../src/leases/lease-metadata";
import { readFileRecoveryEvidence } from "../../src/records/actions";
import { FILE_RECOVERY_CAUSE } from "../../src/records/causes";
import { orphanSweep } from "../../src/recovery/sweeps/orphan-sweep";
import { PLAIN_LOCAL_PLUGIN, submitResult, useFakeFaultWorld } from "./dispatch-fixture";

const world = useFakeFaultWorld();

async function obligations(runId: string) {
  return world.db.issueRecoveryAction.findMany({ where: { runId } });
}

async function held(leaseId: string): Promise<boolean> {
  const rows = await world.db.$queryRaw<{ held: boolean }[]>(Prisma.sql`SELECT ${leaseHeldSql("l")} AS held FROM environment_leases l WHERE l.id = ${leaseId}::uuid`);
  return rows[0]?.held === true;
}

const sandboxOf = (providerLeaseId: string | null) => path.join(world.instanceRoot, "sandboxes", providerLeaseId ?? "", "workspace");

describe("a native run that fails before its result", () => {
  it("R-FO-1 R-FO-2 R-FO-3 an agent that exits without a result: one transaction fails the run, pins the exact sandbox and opens one obligation before the cleanup, which then stops and retains the sandbox with the partial file", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, files: { "README.md": "host\n" }, script: "mkdir -p work && echo 'half done' > work/partial.txt && exit 3" });
    const runId = await world.runOnce(task);
    const state = await world.state(runId);
    expect(state.run).toMatchObject({ status: "failed", errorCode: "agent_exit_nonzero" });
    // R-FO-2: the succeeded preparation is there, and it counted for nothing: no barrier, files retained.
    expect(state.operations.map((o) => `${o.phase}:${o.status}`)).toEqual(["workspace_prepare:succeeded"]);
    const [lease] = state.leases;
    expect(state.leases).toHaveLength(1);
    // The ephemeral lease was NOT destroyed: stopped and retained by the recorded stop-only intent.
    expect(lease).toMatchObject({ status: "released", leasePolicy: "ephemeral" });
    expect(confirmedStopReceipt(lease!.metadata, lease!).kind).toBe("confirmed");
    expect(await readFile(path.join(sandboxOf(lease!.providerLeaseId), "work/partial.txt"), "utf8")).toBe("half done\n");
    expect(await held(lease!.id)).toBe(true);
    const actions = await obligations(runId);
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ cause: FILE_RECOVERY_CAUSE, ownerType: "board", status: "active", leaseId: lease!.id });
    expect(readFileRecoveryEvidence(actions[0]!.evidence)).toMatchObject({
      runId,
      leaseId: lease!.id,
      providerLeaseId: lease!.providerLeaseId,
      pluginId: PLAIN_LOCAL_PLUGIN,
      origin: "agent_exited",
      failureCode: "agent_exit_nonzero",
      pin: "pinned",
    });
    // R-FO-3: retention recorded before the terminal writer, and both before the provider cleanup.
    const retained = state.codes.indexOf("run.files_retained");
    expect(retained).toBeGreaterThan(-1);
    expect(retained).toBeLessThan(state.codes.indexOf("run.failed"));
    expect(state.codes.indexOf("run.failed")).toBeLessThan(state.codes.indexOf("lease.released"));
  });

  it("R-FO-3 a descriptor read failing inside runtime selection: the agent never starts, the obligation and the pin come before the terminal writer and the cleanup", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, files: { "a.txt": "a\n" }, script: `echo started > started.txt; ${submitResult()}` });
    // A real fault in the database: the stored descriptor loses its baseline as the preparation succeeds.
    await world.db.$executeRawUnsafe(`
      CREATE OR REPLACE FUNCTION test_break_descriptor() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.phase = 'workspace_prepare' AND NEW.status = 'succeeded' AND NEW.issue_id = '${task.issueId}'::uuid THEN
          NEW.metadata := NEW.metadata - 'baseline';
        END IF;
        RETURN NEW;
      END $$`);
    await world.db.$executeRawUnsafe(`CREATE TRIGGER test_break_descriptor BEFORE UPDATE ON workspace_operations FOR EACH ROW EXECUTE FUNCTION test_break_descriptor()`);
    let runId: string;
    try {
      runId = await world.runOnce(task);
    } finally {
      await world.db.$executeRawUnsafe(`DROP TRIGGER test_break_descriptor ON workspace_operations`);
    }
    const state = await world.state(runId);
    expect(state.run).toMatchObject({ status: "failed", errorCode: "prepared_workspace_invalid" });
    expect(state.codes).not.toContain("agent.started");
    const [lease] = state.leases;
    await expect(access(path.join(sandboxOf(lease!.providerLeaseId), "started.txt"))).rejects.toThrow();
    expect(lease).toMatchObject({ status: "released" });
    expect(confirmedStopReceipt(lease!.metadata, lease!).kind).toBe("confirmed");
    const actions = await obligations(runId);
    expect(actions).toHaveLength(1);
    expect(readFileRecoveryEvidence(actions[0]!.evidence)).toMatchObject({ origin: "runtime_selection_failure", failureCode: "prepared_workspace_invalid", pin: "pinned" });
    expect(state.codes.indexOf("run.files_retained")).toBeLessThan(state.codes.indexOf("run.failed"));
    expect(state.codes.indexOf("run.failed")).toBeLessThan(state.codes.indexOf("lease.released"));
  });

  it("R-FO-3 a provider error during the agent's turn records the obligation and the pin; the fake sandbox is stopped and retained, never destroyed", async () => {
    const task = await world.task({ provider: "fake" });
    world.fake.faults.failTimes("exec", 1);
    const runId = await world.runOnce(task);
    const state = await world.state(runId);
    expect(state.run).toMatchObject({ status: "failed", errorCode: "provider_fault_injected" });
    expect(state.leases[0]).toMatchObject({ status: "released" });
    expect(confirmedStopReceipt(state.leases[0]!.metadata, state.leases[0]!).kind).toBe("confirmed");
    const actions = await obligations(runId);
    expect(actions).toHaveLength(1);
    expect(readFileRecoveryEvidence(actions[0]!.evidence)).toMatchObject({ origin: "provider_failure", failureCode: "provider_fault_injected" });
  });

  it("R-FO-3 R-FO-4 a preparation failure is settled by the controller's own live claim: operation failed and claim cleared with the retention, in one transaction", async () => {
    const task = await world.task({ provider: "fake" });
    world.fake.faults.failTimes("seedWorkspace", 1);
    const runId = await world.runOnce(task);
    const state = await world.state(runId);
    expect(state.run).toMatchObject({ status: "failed", errorCode: "provider_fault_injected" });
    expect(state.operations).toHaveLength(1);
    expect(state.operations[0]).toMatchObject({ phase: "workspace_prepare", status: "failed", errorCode: "provider_fault_injected" });
    const metadata = state.operations[0]!.metadata as Record<string, unknown>;
    expect(metadata.recoveryClaim).toBeUndefined();
    expect(metadata.settledClaim).toMatchObject({ by: "claim_holder" });
    expect(readFileRecoveryEvidence((await obligations(runId))[0]!.evidence)).toMatchObject({ origin: "preparation_failure" });
    expect(state.leases[0]).toMatchObject({ status: "released" });
  });

  it("R-FO-4 a stale recovery claim is refused: the late failure settles nothing and cleans nothing up; the orphan sweep then takes the claim over and retains the files", async () => {
    const task = await world.task({ provider: "fake" });
    world.fake.faults.failTimes("seedWorkspace", 1);
    // A claim that has expired by the time the seed fails (as if its renewals had stopped).
    const runId = await world.runOnce(task, { deps: { preparationClaimMs: 1 } });
    let state = await world.state(runId);
    expect(state.run.status).toBe("running");
    expect(state.operations).toHaveLength(1);
    expect(state.operations[0]).toMatchObject({ phase: "workspace_prepare", status: "running" });
    expect(state.leases[0]).toMatchObject({ status: "active" });
    expect(await obligations(runId)).toEqual([]);
    expect(state.codes).toContain("workspace.preparation_claim_refused");
    expect(state.codes).not.toContain("lease.released");
    expect(state.codes).not.toContain("run.failed");

    // The executor is done with it: this process's reconciler finds the run orphaned and recovers it.
    const sweep = orphanSweep({ db: world.db, controller: world.deps().controller, executesHere: () => false });
    const units = (await sweep.due(100)).filter((u) => u.runId === runId);
    expect(units).toHaveLength(1);
    expect(await sweep.handle(units[0]!)).toBe("process_lost");
    state = await world.state(runId);
    expect(state.run).toMatchObject({ status: "failed", errorCode: "process_lost" });
    expect(state.operations[0]).toMatchObject({ status: "failed", errorCode: "preparation_interrupted" });
    expect(state.leases[0]).toMatchObject({ status: "pending_cleanup" });
    expect(await obligations(runId)).toHaveLength(1);
  });

  it("R-FO-6 an accepted result keeps its own path: the agent that submitted then exited non-zero is finalized and opens no file obligation", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, script: `echo done > out.txt; ${submitResult()}; exit 5` });
    const runId = await world.runOnce(task);
    const state = await world.state(runId);
    expect(state.run.status).toBe("succeeded");
    expect(await readFile(path.join(task.hostPath, "out.txt"), "utf8")).toBe("done\n");
    expect(await obligations(runId)).toEqual([]);
  });

  it("a run refused before any lease (no environment) fails alone: no obligation, nothing pinned", async () => {
    const task = await world.task({ provider: "fake" });
    const runId = await world.wake(task);
    // The agent lost its environment after the wake: the executor refuses the run before any lease.
    await world.db.agent.update({ where: { id: task.agentId }, data: { environmentId: null } });
    const claimed = (await world.claim(10)).find((r) => r.runId === runId)!;
    await executeRun(world.deps(), claimed, new AbortController().signal);
    const state = await world.state(runId);
    expect(state.run).toMatchObject({ status: "failed", errorCode: "agent_without_environment" });
    expect(state.leases).toEqual([]);
    expect(await obligations(runId)).toEqual([]);
  });
});
