// Helpers of the recovery tests: real process identities (a live one: this test process; a dead
// one: a child that was started, recorded and killed), receipts written the way a crashed
// controller leaves them, and finalization deps whose controller is this real process (so the
// liveness probes of R-OWN-12 see real /proc entries).
import { spawn } from "node:child_process";
import { once } from "node:events";
import type { PrismaClient } from "@copyback/db/client";
import { FINALIZATION_OWNER_KEY, type FinalizationOwnerReceipt } from "../../src/finalization/finalization-owner";
import type { FinalizeRunDeps } from "../../src/finalization/finalize-run";
import type { ProcessIdentity } from "../../src/process/process-identity";
import { readProcessIdentity } from "../../src/process/read-process-identity";
import type { World } from "../finalization/finalization-fixture";

export async function selfIdentity(): Promise<ProcessIdentity> {
  const identity = await readProcessIdentity(process.pid);
  if (!identity) throw new Error("no /proc identity for the test process");
  return identity;
}

/** The identity of a process that existed and is gone now (its PID is free or reused). */
export async function deadIdentity(): Promise<ProcessIdentity> {
  const child = spawn("sleep", ["1000"], { stdio: "ignore" });
  await once(child, "spawn");
  const identity = await readProcessIdentity(child.pid as number);
  if (!identity) throw new Error("could not read the child's identity");
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
  return identity;
}

export function receiptOf(identity: ProcessIdentity, token = `tok-${Math.random().toString(36).slice(2)}-${Date.now()}`): FinalizationOwnerReceipt {
  return { token, host: identity.host, pid: identity.pid, processStart: identity.startTime, bootId: identity.bootId };
}

/** Leaves a receipt on the run as a controller that took ownership and crashed would. */
export async function leaveReceipt(db: PrismaClient, runId: string, receipt: FinalizationOwnerReceipt | Record<string, unknown>): Promise<void> {
  await db.$executeRaw`
    UPDATE heartbeat_runs
    SET runner_profile_json = runner_profile_json || jsonb_build_object(${FINALIZATION_OWNER_KEY}::text, ${JSON.stringify(receipt)}::jsonb)
    WHERE id = ${runId}::uuid`;
}

/** finalizeRun deps of the world with this real process as the controller. */
export async function liveDeps(world: World, extra: Partial<FinalizeRunDeps> = {}): Promise<FinalizeRunDeps> {
  return { ...world.deps(), controller: await selfIdentity(), ...extra };
}

/** A copy of the crash state: the coordinator mid-copyback, as a controller that died during export leaves it. */
export async function markFinalizing(db: PrismaClient, runId: string): Promise<void> {
  await db.nativeRunFinalization.update({ where: { runId }, data: { phase: "workspace_finalizing", attempt: 1 } });
  await db.$executeRaw`UPDATE heartbeat_runs SET native_phase = 'workspace_finalizing', result_json = COALESCE(result_json, '{}'::jsonb) || '{"finalizationPhase":"workspace_finalizing"}'::jsonb WHERE id = ${runId}::uuid`;
  await db.workspaceOperation.create({
    data: {
      companyId: (await db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).companyId,
      runId,
      issueId: (await db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).nativeIssueId,
      phase: "workspace_finalize",
      status: "running",
      metadata: { attempt: 1 },
    },
  });
}

/** The barrier a finished copyback leaves. */
export async function writeBarrier(db: PrismaClient, runId: string): Promise<void> {
  const run = await db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
  await db.workspaceOperation.updateMany({ where: { runId, phase: "workspace_finalize", status: "running" }, data: { status: "failed", errorCode: "controller_crashed", finishedAt: new Date() } });
  await db.workspaceOperation.create({
    data: { companyId: run.companyId, runId, issueId: run.nativeIssueId, phase: "workspace_finalize", status: "succeeded", metadata: { written: 0, deleted: 0, unchanged: true }, finishedAt: new Date() },
  });
}
