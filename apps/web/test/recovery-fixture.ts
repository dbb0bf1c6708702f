// An unverified copyback owner hold as a crashed controller leaves it, built from the real state
// rather than a made-up action row: a running native run bound to its open task (as the dispatch
// claim leaves it), its environment lease, an accepted result published by core's
// publishRunResult, the coordinator mid-copyback (workspace_finalizing, a running
// workspace_finalize operation), the dead controller's owner receipt on the run, and the
// board-owned action opened by core's one writer (openOwnerUnverifiedAction), exactly as the
// reconciler opens it.
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { once } from "node:events";
import type { PrismaClient } from "@copyback/db/client";
import {
  FINALIZATION_OWNER_KEY,
  type FinalizationOwnerReceipt,
  openOwnerUnverifiedAction,
  type UnverifiedReason,
  RUN_RESULT_SCHEMA,
} from "@copyback/core/records";
import { readProcessIdentity } from "@copyback/core/process";
import { publishRunResult } from "@copyback/core/runs";

export interface HoldPlace {
  companyId: string;
  /** The run's agent (it publishes the result). */
  agentId: string;
  /** The lease's environment. */
  environmentId: string;
  /** The task's last activity (default now); a past one keeps it off the top of the board. */
  lastActivityAt?: Date;
}

/** Where the dead controller was: on another machine, or a child of this test that was killed. */
export type DeadController = "foreign_host" | "exited_here";

export interface OwnerHold {
  issueId: string;
  identifier: string;
  runId: string;
  actionId: string;
  leaseId: string;
  resultId: string;
  receipt: FinalizationOwnerReceipt;
}

let issueNumber = 90_000;

/** A process that existed on this host and is gone now: a child started, recorded and killed. */
async function exitedChild(): Promise<{ pid: number; startTime: string; bootId: string; host: string }> {
  const child = spawn("sleep", ["1000"], { stdio: "ignore" });
  await once(child, "spawn");
  const identity = await readProcessIdentity(child.pid as number);
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
  if (!identity) throw new Error("fixture: could not read the child's /proc identity");
  return identity;
}

function foreignController(): { pid: number; startTime: string; bootId: string; host: string } {
  // Distinctive on purpose: tests search every payload for this host name and pid.
  return { pid: 48_213, startTime: "99887766", bootId: randomUUID(), host: `retired-controller-${randomBytes(4).toString("hex")}.internal` };
}

export async function createOwnerHold(db: PrismaClient, place: HoldPlace, dead: DeadController = "foreign_host"): Promise<OwnerHold> {
  const { companyId, agentId } = place;
  const number = ++issueNumber;
  const controller = dead === "foreign_host" ? foreignController() : await exitedChild();
  const issue = await db.issue.create({
    data: {
      companyId,
      number,
      identifier: `ACME-${number}`,
      title: `Held task ${number}`,
      status: "in_progress",
      statusVersion: 1,
      assigneeAgentId: agentId,
      ...(place.lastActivityAt ? { lastActivityAt: place.lastActivityAt } : {}),
    },
  });
  const claimedAt = new Date();
  // What claimQueuedRuns leaves: a running native run recording its controller and its claim.
  const run = await db.heartbeatRun.create({
    data: {
      companyId,
      agentId,
      nativeIssueId: issue.id,
      runtimeMode: "native",
      status: "running",
      nativePhase: "observed",
      startedAt: claimedAt,
      controllerPid: controller.pid,
      controllerProcessStart: controller.startTime,
      controllerBootId: controller.bootId,
      controllerHost: controller.host,
      runnerProfileJson: { nativeClaim: { issueId: issue.id, statusVersion: 1, claimedAt: claimedAt.toISOString() } },
      resultJson: { finalizationPhase: "observed" },
    },
  });
  await db.nativeRunFinalization.create({ data: { companyId, runId: run.id, issueId: issue.id, phase: "observed" } });
  await db.issue.update({ where: { id: issue.id }, data: { executionRunId: run.id, checkoutRunId: run.id } });
  const lease = await db.environmentLease.create({
    data: {
      companyId,
      environmentId: place.environmentId,
      runId: run.id,
      issueId: issue.id,
      provider: "fake",
      pluginId: "builtin.fake",
      providerLeaseId: `sbx-${randomUUID()}`,
      leasePolicy: "retain_on_failure",
      status: "active",
    },
  });
  const published = await publishRunResult(db, {
    runId: run.id,
    agentId,
    dedupeKey: "finish",
    document: { schema: RUN_RESULT_SCHEMA, outcome: "in_review", summary: "Did the work." },
    source: "finish_api",
  });
  if (published.kind !== "accepted") throw new Error("fixture: result not accepted");

  // The crash: the controller took ownership, started the copyback and died mid-export.
  await db.nativeRunFinalization.update({ where: { runId: run.id }, data: { phase: "workspace_finalizing", attempt: 1 } });
  await db.workspaceOperation.create({
    data: { companyId, runId: run.id, issueId: issue.id, phase: "workspace_finalize", status: "running", metadata: { attempt: 1 } },
  });
  const receipt: FinalizationOwnerReceipt = {
    token: randomBytes(24).toString("base64url"),
    host: controller.host,
    pid: controller.pid,
    processStart: controller.startTime,
    bootId: controller.bootId,
  };
  await db.$executeRaw`
    UPDATE heartbeat_runs
    SET native_phase = 'workspace_finalizing',
        result_json = COALESCE(result_json, '{}'::jsonb) || '{"finalizationPhase":"workspace_finalizing"}'::jsonb,
        runner_profile_json = runner_profile_json || jsonb_build_object(${FINALIZATION_OWNER_KEY}::text, ${JSON.stringify(receipt)}::jsonb)
    WHERE id = ${run.id}::uuid`;

  const reason: UnverifiedReason = dead === "foreign_host" ? "controller_on_other_host" : "controller_exited_without_barrier";
  const opened = await openOwnerUnverifiedAction(db, {
    companyId,
    issueId: issue.id,
    runId: run.id,
    receipt,
    reason,
    phase: "workspace_finalizing",
    resultId: published.resultId,
    leaseIds: [lease.id],
  });
  if (!opened.created) throw new Error("fixture: the hold was not opened");
  return { issueId: issue.id, identifier: issue.identifier, runId: run.id, actionId: opened.actionId, leaseId: lease.id, resultId: published.resultId, receipt };
}

/** What an attestation may change, to prove a refusal changed nothing. */
export async function holdState(db: PrismaClient, hold: Pick<OwnerHold, "runId" | "actionId" | "issueId">) {
  const [run, action, issue, coordinator, activity] = await Promise.all([
    db.heartbeatRun.findUniqueOrThrow({ where: { id: hold.runId }, select: { status: true, runnerProfileJson: true, resultJson: true } }),
    db.issueRecoveryAction.findUniqueOrThrow({ where: { id: hold.actionId }, select: { status: true, evidence: true, updatedAt: true } }),
    db.issue.findUniqueOrThrow({ where: { id: hold.issueId }, select: { status: true, statusVersion: true } }),
    db.nativeRunFinalization.findUniqueOrThrow({ where: { runId: hold.runId }, select: { phase: true, attempt: true, nextAttemptAt: true } }),
    db.activityLog.count({ where: { entityId: hold.actionId } }),
  ]);
  return { run, action, issue, coordinator, activity };
}

/** Whether the run still carries its owner receipt. */
export async function carriesReceipt(db: PrismaClient, runId: string): Promise<boolean> {
  const run = await db.heartbeatRun.findUniqueOrThrow({ where: { id: runId }, select: { runnerProfileJson: true } });
  return typeof run.runnerProfileJson === "object" && run.runnerProfileJson !== null && FINALIZATION_OWNER_KEY in run.runnerProfileJson;
}
