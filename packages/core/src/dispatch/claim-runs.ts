// The dispatch claim: queued native runs, oldest first, each taken by exactly one worker
// (FOR UPDATE SKIP LOCKED: rows another claimer holds are skipped, not waited for). Claiming
// starts the run, records the controller process (R-OWN-12), creates the coordinator in phase
// `observed` and hands the task to the run (in_progress, execution and checkout run, a new
// status_version that the status arbiter later compares against). A run held by its agent-pack
// verification (R-PV-1) stays queued and is skipped until its hold's reverify.
import { Prisma, selectForUpdateSkipLocked, withTransaction, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { canonicalDirectoryOf } from "../copyback/merge/canonical-directory";
import { otherHostAlive } from "../deployment/worker-hosts";
import { invalid } from "../errors";
import type { ProcessIdentity } from "../process/process-identity";
import { NOT_HELD_BY_PACK_VERIFICATION_SQL } from "../records/agent-pack-verification";
import { RECONSTRUCTION_AUTHORITY_KEY } from "../records/reconstruction-authority";
import { reconstructionGate, withdrawReconstruction } from "../recovery/reconstruction/dispatch-gate";
import { recordActivity, SYSTEM_ACTOR } from "../records/record-activity";
import { mergedJsonObject, NATIVE_CLAIM_KEY, type NativeClaimRecord } from "../records/run-json";
import { recordRunEvent } from "../records/run-log";
import { decideUnboundClaim } from "./unbound-claim-policy";

export interface ClaimedRun {
  runId: string;
  companyId: string;
  issueId: string;
  agentId: string;
}

export interface ClaimQueuedRunsInput {
  /** How many runs this claimer may start now (the worker's free concurrency). */
  limit: number;
  /** The process that will drive the claimed runs. */
  controller: ProcessIdentity;
  /** The instance root: a reconstruction's run rechecks its attachments' stored bytes there at claim (R-RC-5). */
  instanceRoot?: string;
  /**
   * This claimer's host id (deployment/host-id.ts). Issue 23: a run whose execution workspace is
   * bound to another host is not claimed here, and an unbound workspace is bound to this host by
   * the claim (when its directory is here, or no other host is live: unbound-claim-policy.ts).
   * Absent only for single-host callers (tests, the bench): no host filter, no binding.
   */
  hostId?: string;
}

interface QueuedRow {
  id: string;
  runtime_mode: string;
  company_id: string;
  agent_id: string;
  native_issue_id: string;
  /** The run carries a reconstruction's authority (RECONSTRUCTION_AUTHORITY_KEY): its claim is rechecked. */
  reconstruction: boolean;
}

export async function claimQueuedRuns(db: PrismaClient, input: ClaimQueuedRunsInput): Promise<ClaimedRun[]> {
  if (!Number.isInteger(input.limit) || input.limit < 0) {
    throw invalid("claim_limit_invalid", "The claim limit must be a non-negative integer.");
  }
  if (input.limit === 0) return [];
  return withTransaction(db, async (tx) => {
    const queued = await selectForUpdateSkipLocked<QueuedRow>(
      tx,
      Prisma.sql`SELECT id, company_id, agent_id, native_issue_id, runtime_mode::text AS runtime_mode,
                        runner_profile_json ? ${RECONSTRUCTION_AUTHORITY_KEY} AS reconstruction FROM heartbeat_runs
                 WHERE status = 'queued' AND runtime_mode IN ('native', 'legacy') AND ${NOT_HELD_BY_PACK_VERIFICATION_SQL}
                   AND ${input.hostId === undefined ? Prisma.sql`TRUE` : claimableOnHostSql(input.hostId)}
                 ORDER BY created_at, id LIMIT ${input.limit}`,
    );
    const claimed: ClaimedRun[] = [];
    for (const row of queued) {
      const run = await startOne(tx, row, input);
      if (run) claimed.push(run);
    }
    return claimed;
  });
}

/**
 * Issue 23 (host affinity): a queued run is claimable on a host unless its task's execution
 * workspace is bound to another one. The host workspace (and its directory-merge locks) is on one
 * host's disk whatever the provider: a remote sandbox may be driven from any host only when the
 * workspace it copies back into is this host's or not bound yet.
 */
function claimableOnHostSql(hostId: string): Prisma.Sql {
  return Prisma.sql`NOT EXISTS (SELECT 1 FROM issues hi JOIN execution_workspaces hw ON hw.id = hi.execution_workspace_id
                                WHERE hi.id = heartbeat_runs.native_issue_id AND hw.host_id IS NOT NULL AND hw.host_id <> ${hostId})`;
}

/**
 * Binds the run's workspace to this host if it is not bound yet, and says whether it is this
 * host's. The workspace row is locked (FOR NO KEY UPDATE, the lock the binding UPDATE alone took,
 * which a workspace move waits for), so of two hosts claiming runs of one unbound workspace at
 * once exactly one binds it; the other waits, sees the winner's id and leaves its run queued.
 *
 * An unbound workspace is bound here only where decideUnboundClaim allows: its host directory
 * exists here, or no other host has a live worker (else the run stays queued, nothing written,
 * for the host that holds the directory). The filesystem check and the worker_hosts read run
 * inside this transaction, under the row lock, but only for an unbound workspace: once per
 * workspace, since the first claim binds it. A bound workspace's claim does neither, so the
 * common path costs what it did (one row lock, now without a write).
 */
async function boundToThisHost(tx: TransactionClient, issueId: string, hostId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: string; host_id: string | null; host_path: string }[]>`
    SELECT id, host_id, host_path FROM execution_workspaces
    WHERE id = (SELECT execution_workspace_id FROM issues WHERE id = ${issueId}::uuid) FOR NO KEY UPDATE`;
  // No workspace: nothing host-local to bind (the run is rejected later for it, on any host).
  const workspace = rows[0];
  if (!workspace) return true;
  if (workspace.host_id !== null) return workspace.host_id === hostId;
  const directoryHere = (await canonicalDirectoryOf(workspace.host_path)) !== null;
  const otherLiveHosts = directoryHere ? false : await otherHostAlive(tx, hostId);
  if (decideUnboundClaim({ directoryHere, otherLiveHosts }) === "leave") return false;
  await tx.$executeRaw`UPDATE execution_workspaces SET host_id = ${hostId}, updated_at = now() WHERE id = ${workspace.id}::uuid`;
  return true;
}

/** Starts one locked queued run, or cancels it when its task or agent went away meanwhile. */
async function startOne(tx: TransactionClient, row: QueuedRow, input: ClaimQueuedRunsInput): Promise<ClaimedRun | null> {
  const { controller } = input;
  // Issue 23: before anything reads this host's files (the reconstruction gate below reads the
  // instance root), the workspace must be this host's; another host's run stays queued.
  if (input.hostId !== undefined && !(await boundToThisHost(tx, row.native_issue_id, input.hostId))) return null;
  // R-RC-5: a reconstruction's queued run rechecks its exact intent, sources and gates when
  // claimed (before the issue lock: its snapshot locks the source run, then the issue). A refusal
  // cancels the run and leaves the task exactly as it is: a later human block is never overwritten.
  const gate = row.reconstruction ? await reconstructionGate(tx, { runId: row.id, stage: "claim", instanceRoot: input.instanceRoot }) : { kind: "ordinary" as const };
  // Only the source run's finalization lock busy: the run stays queued for the next claim pass.
  if (gate.kind === "busy") return null;
  if (gate.kind === "reject") {
    const message = `The reconstruction's run was not started (${gate.code}): ${gate.message}`;
    await tx.heartbeatRun.update({ where: { id: row.id }, data: { status: "cancelled", errorCode: gate.code, errorMessage: message, finishedAt: new Date() } });
    await recordRunEvent(tx, { companyId: row.company_id, runId: row.id, level: "warn", code: "run.cancelled", message, payload: { errorCode: gate.code, intentId: gate.intentId } });
    if (gate.intentId) await withdrawReconstruction(tx, { intentId: gate.intentId, runId: row.id, code: gate.code, message });
    return null;
  }
  // Lock order heartbeat -> issue, as in publication and failRun.
  await tx.$queryRaw`SELECT id FROM issues WHERE id = ${row.native_issue_id}::uuid FOR UPDATE`;
  const issue = await tx.issue.findUniqueOrThrow({
    where: { id: row.native_issue_id },
    select: { id: true, status: true, statusVersion: true },
  });
  const agent = await tx.agent.findUniqueOrThrow({ where: { id: row.agent_id }, select: { archivedAt: true } });
  const refusal =
    issue.status === "done" || issue.status === "cancelled"
      ? { code: "issue_closed", message: `The task was ${issue.status} before the run started.` }
      : agent.archivedAt
        ? { code: "agent_archived", message: "The agent was archived before the run started." }
        : null;
  const now = new Date();
  if (refusal) {
    await tx.heartbeatRun.update({
      where: { id: row.id },
      data: { status: "cancelled", errorCode: refusal.code, errorMessage: refusal.message, finishedAt: now },
    });
    await recordRunEvent(tx, { companyId: row.company_id, runId: row.id, level: "warn", code: "run.cancelled", message: refusal.message, payload: { errorCode: refusal.code } });
    return null;
  }

  const statusVersion = issue.statusVersion + 1;
  const claim: NativeClaimRecord = { issueId: issue.id, statusVersion, claimedAt: now.toISOString() };
  // A legacy run copies back by the older protocol, without the native coordinator (R-RR-2).
  const native = row.runtime_mode === "native";
  await tx.$executeRaw`
    UPDATE heartbeat_runs
    SET status = 'running',
        started_at = ${now},
        controller_pid = ${controller.pid},
        controller_process_start = ${controller.startTime},
        controller_boot_id = ${controller.bootId},
        controller_host = ${controller.host},
        native_phase = ${native ? "observed" : null},
        runner_profile_json = ${mergedJsonObject("runner_profile_json", Prisma.sql`jsonb_build_object(${NATIVE_CLAIM_KEY}::text, ${JSON.stringify(claim)}::jsonb)`)},
        result_json = ${native ? mergedJsonObject("result_json", Prisma.sql`jsonb_build_object('finalizationPhase', 'observed')`) : Prisma.sql`result_json`},
        updated_at = now()
    WHERE id = ${row.id}::uuid`;
  if (native) {
    await tx.nativeRunFinalization.create({
      data: { companyId: row.company_id, runId: row.id, issueId: issue.id, phase: "observed" },
    });
  }
  await tx.issue.update({
    where: { id: issue.id },
    data: {
      status: "in_progress",
      statusVersion,
      executionRunId: row.id,
      checkoutRunId: row.id,
      lastActivityAt: now,
    },
  });
  if (issue.status !== "in_progress") {
    await recordActivity(tx, {
      companyId: row.company_id,
      actor: SYSTEM_ACTOR,
      action: "issue.status_changed",
      entityType: "issue",
      entityId: issue.id,
      details: { from: issue.status, to: "in_progress", runId: row.id },
    });
  }
  await recordActivity(tx, {
    companyId: row.company_id,
    actor: SYSTEM_ACTOR,
    action: "run.started",
    entityType: "run",
    entityId: row.id,
    details: { issueId: issue.id, controllerHost: controller.host, controllerPid: controller.pid, ...(input.hostId !== undefined ? { hostId: input.hostId } : {}) },
  });
  await recordRunEvent(tx, {
    companyId: row.company_id,
    runId: row.id,
    level: "info",
    code: "run.started",
    message: `Run claimed by controller ${controller.host}:${controller.pid}.`,
  });
  return { runId: row.id, companyId: row.company_id, issueId: issue.id, agentId: row.agent_id };
}
