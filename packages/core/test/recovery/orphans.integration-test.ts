// The orphan sweep's restraint on a real PostgreSQL (R-ORP-1, R-ORP-2, R-ORP-3): a running run
// whose controller died is never turned into process_lost while the finalizer owns its accepted
// result, also before any receipt; the conditional write re-checks xmin and the durable result;
// a run without a result ends process_lost with its exact lease pinned and one file-recovery
// obligation (R-FO-1), after a surviving agent group was stopped by PID + start time; the dead
// controller's unfinished preparation is taken over (R-FO-4).
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Prisma } from "@copyback/db/client";
import { recordAgentProcess } from "../../src/records/agent-process";
import { leaseHeldSql } from "../../src/leases/lease-holds";
import { readStopIntent } from "../../src/leases/lease-metadata";
import { probeProcess, readProcessIdentity } from "../../src/process/read-process-identity";
import { processGroupMembers } from "../../src/process/stop-process-group";
import { readFileRecoveryEvidence } from "../../src/records/actions";
import { FILE_RECOVERY_CAUSE } from "../../src/records/causes";
import { failRunBeforeResult } from "../../src/recovery/file-recovery";
import { markProcessLost, orphanSweep, PROCESS_LOST_CODE } from "../../src/recovery/sweeps/orphan-sweep";
import { newPreparationClaim } from "../../src/records/preparation-claim";
import { acceptResult, claimedRun, preparedRun, type World, useWorld } from "../finalization/finalization-fixture";
import { deadIdentity, markFinalizing, selfIdentity } from "./recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

/** Records a dead process of this host as the run's controller (the worker that claimed it was SIGKILLed). */
async function orphan(runId: string): Promise<void> {
  const dead = await deadIdentity();
  await db.prisma().heartbeatRun.update({
    where: { id: runId },
    data: { controllerPid: dead.pid, controllerProcessStart: dead.startTime, controllerBootId: dead.bootId, controllerHost: dead.host },
  });
}

async function until(probe: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function sweep() {
  return orphanSweep({ db: db.prisma(), controller: await selfIdentity() });
}

async function handleAll(units: Awaited<ReturnType<Awaited<ReturnType<typeof sweep>>["due"]>>) {
  const s = await sweep();
  const outcomes: Record<string, string> = {};
  for (const unit of units) outcomes[unit.runId] = await s.handle(unit);
  return outcomes;
}

describe("the orphan sweep", () => {
  it("R-ORP-1: a workspace_finalizing coordinator with an accepted result is the finalizer's, also before any receipt: never process_lost", async () => {
    const run = await preparedRun(world);
    await markFinalizing(db.prisma(), run.runId);
    await orphan(run.runId);
    const units = (await (await sweep()).due(100)).filter((u) => u.runId === run.runId);
    expect(units).toHaveLength(1);
    expect(await handleAll(units)).toEqual({ [run.runId]: "left_finalizer_owns" });
    const after = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
    expect(after.status).toBe("running");
    expect(after.errorCode).toBeNull();
  });

  it("R-ORP-1: result_accepted (the finalizer has not even started) is left as well", async () => {
    const run = await preparedRun(world);
    await orphan(run.runId);
    const units = (await (await sweep()).due(100)).filter((u) => u.runId === run.runId);
    expect(await handleAll(units)).toEqual({ [run.runId]: "left_finalizer_owns" });
  });

  it("R-ORP-2: a result published after the sweep's snapshot wins: the conditional write re-checks xmin and the durable result", async () => {
    const run = await claimedRun(world);
    await orphan(run.runId);
    const units = (await (await sweep()).due(100)).filter((u) => u.runId === run.runId);
    expect(units).toHaveLength(1);
    // Published between the selection and the write: it locks and updates the heartbeat row.
    await acceptResult(world, run.runId);
    expect(await handleAll(units)).toEqual({ [run.runId]: "left_finalizer_owns" });
    // Even forcing the decision past the policy, the conditional write refuses the stale row.
    expect(await markProcessLost(db.prisma(), units[0]!)).toBe("lost_race");
    expect((await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("running");
  });

  it("R-ORP-2 R-FO-1: without a result the run ends process_lost in one conditional write; the task goes to people; the exact lease is pinned (never released or destroyed) and one obligation names run, lease and allocation", async () => {
    const run = await claimedRun(world);
    await orphan(run.runId);
    const leaseBefore = await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } });
    const units = (await (await sweep()).due(100)).filter((u) => u.runId === run.runId);
    expect(await handleAll(units)).toEqual({ [run.runId]: "process_lost" });
    const after = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
    expect(after).toMatchObject({ status: "failed", errorCode: PROCESS_LOST_CODE });
    expect((await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } })).phase).toBe("terminal_failure");
    expect((await db.prisma().issue.findUniqueOrThrow({ where: { id: run.issueId } })).status).toBe("blocked");
    const lease = await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } });
    expect(lease).toMatchObject({ status: "pending_cleanup", providerLeaseId: leaseBefore.providerLeaseId, pluginId: leaseBefore.pluginId, runId: run.runId });
    expect(readStopIntent(lease.metadata, lease)).toMatchObject({ kind: "present", value: { leaseId: lease.id, providerLeaseId: leaseBefore.providerLeaseId, runId: run.runId } });
    const actions = await db.prisma().issueRecoveryAction.findMany({ where: { runId: run.runId } });
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ cause: FILE_RECOVERY_CAUSE, ownerType: "board", status: "active", leaseId: lease.id, issueId: run.issueId });
    expect(readFileRecoveryEvidence(actions[0]!.evidence)).toMatchObject({
      runId: run.runId,
      leaseId: lease.id,
      leaseIds: [lease.id],
      providerLeaseId: leaseBefore.providerLeaseId,
      pluginId: leaseBefore.pluginId,
      origin: "controller_lost",
      failureCode: PROCESS_LOST_CODE,
      agentStop: "not_recorded",
      pin: "pinned",
    });
    // R-FO-5 wording: names the run and its allocation, never recommends rerunning.
    expect(actions[0]!.nextAction).toContain(run.runId);
    expect(actions[0]!.nextAction).toContain(leaseBefore.providerLeaseId ?? "");
    expect(actions[0]!.nextAction).not.toMatch(/\b(re-?run|wake|new agent turn)\b/i);
    // The lease is held: the reuse query's condition says so.
    const held = await db.prisma().$queryRaw<{ held: boolean }[]>(Prisma.sql`SELECT ${leaseHeldSql("l")} AS held FROM environment_leases l WHERE l.id = ${lease.id}::uuid`);
    expect(held[0]?.held).toBe(true);
  });

  it("R-ORP-2 R-FO-1: a run whose controller died before any sandbox was acquired fails process_lost without claiming a kept sandbox (nothing is retained, no action opens)", async () => {
    const run = await claimedRun(world);
    // Killed between loading the run and acquiring its sandbox: no lease row.
    await db.prisma().environmentLease.delete({ where: { id: run.handle.leaseId } });
    await orphan(run.runId);
    const units = (await (await sweep()).due(100)).filter((u) => u.runId === run.runId);
    expect(await handleAll(units)).toEqual({ [run.runId]: "process_lost" });
    const after = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
    expect(after).toMatchObject({ status: "failed", errorCode: PROCESS_LOST_CODE });
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId: run.runId } })).toBe(0);
    const events = await db.prisma().runEvent.findMany({ where: { runId: run.runId, code: { in: ["run.process_lost", "run.failed", "run.files_retained"] } } });
    expect(events.map((e) => e.code).sort()).toEqual(["run.failed", "run.process_lost"]);
    for (const text of [after.errorMessage ?? "", ...events.map((e) => e.message)]) expect(text).not.toMatch(/sandbox|retained|kept/i);
  });

  it("R-FO-1: a second sweep (or a second worker) opens no second obligation and fails nothing twice", async () => {
    const run = await claimedRun(world);
    await orphan(run.runId);
    const units = (await (await sweep()).due(100)).filter((u) => u.runId === run.runId);
    expect(await handleAll(units)).toEqual({ [run.runId]: "process_lost" });
    // The same (now stale) unit again: the conditional write refuses it.
    expect(await markProcessLost(db.prisma(), units[0]!)).toBe("lost_race");
    expect((await (await sweep()).due(100)).map((u) => u.runId)).not.toContain(run.runId);
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId: run.runId } })).toBe(1);
    expect(await db.prisma().runEvent.count({ where: { runId: run.runId, code: "run.failed" } })).toBe(1);
  });

  it("R-FO-1: an orphaned agent still running in its own process group is stopped by PID + start time (the whole group) before the run fails; its partial file is kept", async () => {
    const run = await claimedRun(world);
    const sandbox = run.sandbox;
    await mkdir(sandbox, { recursive: true });
    // The agent as a plain process group (detached: its own group and session): a shell and a child that keep writing.
    const agent = spawn("/bin/sh", ["-c", `(while true; do echo x >> "${sandbox}/child.txt"; sleep 0.05; done) & while true; do echo y >> "${sandbox}/partial.txt"; sleep 0.05; done`], { detached: true, stdio: "ignore" });
    await once(agent, "spawn");
    const identity = await readProcessIdentity(agent.pid as number);
    expect(identity).not.toBeNull();
    await recordAgentProcess(db.prisma(), run.runId, identity!);
    await until(async () => (await processGroupMembers(agent.pid as number)).length >= 2);
    await orphan(run.runId);
    const units = (await (await sweep()).due(100)).filter((u) => u.runId === run.runId);
    const s = orphanSweep({ db: db.prisma(), controller: await selfIdentity(), agentStopGraceMs: 500 });
    expect(await s.handle(units[0]!)).toBe("process_lost");
    // The whole group is gone (verified in /proc), the leader included.
    expect(await processGroupMembers(agent.pid as number)).toEqual([]);
    expect((await probeProcess(identity!)).kind).toBe("dead");
    const partial = await readFile(join(sandbox, "partial.txt"), "utf8");
    await new Promise((r) => setTimeout(r, 200));
    expect(await readFile(join(sandbox, "partial.txt"), "utf8")).toBe(partial);
    const action = await db.prisma().issueRecoveryAction.findFirstOrThrow({ where: { runId: run.runId, cause: FILE_RECOVERY_CAUSE } });
    expect(readFileRecoveryEvidence(action.evidence)).toMatchObject({ agentStop: "stopped", agentProcess: { pid: identity!.pid, startTime: identity!.startTime } });
  });

  it("R-FO-1: a PID reused by another process (its start time differs) is never signalled", async () => {
    const run = await claimedRun(world);
    const bystander = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
    await once(bystander, "spawn");
    try {
      const real = await readProcessIdentity(bystander.pid as number);
      // The run recorded a process with this PID but another start time: the number was handed out again.
      await recordAgentProcess(db.prisma(), run.runId, { ...real!, startTime: String(BigInt(real!.startTime) - 1n) });
      await orphan(run.runId);
      const units = (await (await sweep()).due(100)).filter((u) => u.runId === run.runId);
      expect(await handleAll(units)).toEqual({ [run.runId]: "process_lost" });
      expect((await probeProcess(real!)).kind).toBe("alive");
      const action = await db.prisma().issueRecoveryAction.findFirstOrThrow({ where: { runId: run.runId, cause: FILE_RECOVERY_CAUSE } });
      expect(readFileRecoveryEvidence(action.evidence)?.agentStop).toBe("not_running");
    } finally {
      bystander.kill("SIGKILL");
    }
  });

  it("R-FO-4: a preparation the dead controller left running is taken over and settled in the same transaction; the old holder's late settle is refused and writes nothing", async () => {
    const run = await claimedRun(world);
    const dead = await deadIdentity();
    await db.prisma().heartbeatRun.update({ where: { id: run.runId }, data: { controllerPid: dead.pid, controllerProcessStart: dead.startTime, controllerBootId: dead.bootId, controllerHost: dead.host } });
    const claim = newPreparationClaim(dead, new Date());
    const op = await db.prisma().workspaceOperation.create({
      data: { companyId: world.companyId, runId: run.runId, issueId: run.issueId, phase: "workspace_prepare", status: "running", metadata: { leaseId: run.handle.leaseId, recoveryClaim: claim } },
    });
    const units = (await (await sweep()).due(100)).filter((u) => u.runId === run.runId);
    expect(await handleAll(units)).toEqual({ [run.runId]: "process_lost" });
    const settled = await db.prisma().workspaceOperation.findUniqueOrThrow({ where: { id: op.id } });
    expect(settled).toMatchObject({ status: "failed", errorCode: "preparation_interrupted" });
    expect((settled.metadata as Record<string, unknown>).recoveryClaim).toBeUndefined();
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId: run.runId, cause: FILE_RECOVERY_CAUSE } })).toBe(1);
    // The old holder comes back late with its token: refused, nothing more is written.
    const late = await failRunBeforeResult(db.prisma(), { runId: run.runId, code: "workspace_prepare_failed", message: "late", origin: "preparation_failure", leaseId: run.handle.leaseId, preparation: { operationId: op.id, token: claim.token } });
    expect(late.kind).toBe("already_settled");
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId: run.runId } })).toBe(1);
  });

  it("a run whose controller lives, or whose controller is on another host, is not selected", async () => {
    const live = await claimedRun(world);
    const self = await selfIdentity();
    await db.prisma().heartbeatRun.update({ where: { id: live.runId }, data: { controllerPid: self.pid, controllerProcessStart: self.startTime, controllerBootId: self.bootId, controllerHost: self.host } });
    const foreign = await claimedRun(world);
    await db.prisma().heartbeatRun.update({ where: { id: foreign.runId }, data: { controllerPid: 1, controllerProcessStart: "1", controllerBootId: "b", controllerHost: "another-host" } });
    const ids = (await (await sweep()).due(100)).map((u) => u.runId);
    expect(ids).not.toContain(live.runId);
    expect(ids).not.toContain(foreign.runId);
  });

  it("a run of THIS process that it no longer executes (its executor gave up, e.g. the database dropped the failure write) is an orphan; while a claim is in flight, or while it executes, it is not", async () => {
    const run = await claimedRun(world);
    const self = await selfIdentity();
    await db.prisma().heartbeatRun.update({ where: { id: run.runId }, data: { controllerPid: self.pid, controllerProcessStart: self.startTime, controllerBootId: self.bootId, controllerHost: self.host } });
    let executing = true;
    const sweep = orphanSweep({ db: db.prisma(), controller: self, executesHere: () => executing });
    expect((await sweep.due(100)).map((u) => u.runId)).not.toContain(run.runId);
    executing = false;
    const units = (await sweep.due(100)).filter((u) => u.runId === run.runId);
    expect(units).toHaveLength(1);
    expect(await sweep.handle(units[0]!)).toBe("process_lost");
  });
});
