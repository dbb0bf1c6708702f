// Resolving a recovery action (R-RR-5, R-RR-6, R-FO-5): the one service behind
//   POST /api/issues/:id/recovery-actions/resolve (REST), recovery.resolve (tRPC) and
//   `copyback recovery resolve` (CLI).
// The caller has checked `runtime:manage` (board operators only). In ONE transaction this locks the
// action, the source run, the task and the retained lease (in that order: run -> issue, as the
// arbiter), asks decideResolve and, on admission, writes exactly one thing besides its audit rows:
// the action's resolution with the verified evidence. The task's status, owner, conversation
// generation and execution/checkout locks, the run and the lease are not touched; nothing is
// queued or replayed; the allocation is never destroyed (R-RR-6). The one exception is R-PV-1's
// `reverify`: the held run (already queued, never started) gets a fresh agent-pack read budget and
// is released to the claim, in the same transaction. A refusal is a DomainError
// `conflict` with a stable code and writes nothing.
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { z } from "zod";
import { conflict, notFound } from "../../errors";
import { recordActivity, type Actor } from "../../records/record-activity";
import { recordRunEvent } from "../../records/run-log";
import { recordRecoveryResolution } from "../../records/actions";
import { renewPackBudget } from "../../records/agent-pack-verification";
import { decideResolve, type RecordedSource } from "../policies/decide-resolve";
import { OUTCOME_REQUIRES, RESOLVE_OUTCOMES } from "../resolvable-holds";

const ISSUE_STATUSES = ["backlog", "todo", "in_progress", "in_review", "blocked", "done", "cancelled"] as const;
const RUN_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled", "timed_out"] as const;
const text = z.string().trim().min(1).max(20_000);

/** R-RR-5: the request body, shared by the REST route, the tRPC procedure and the CLI. */
export const resolveRecoveryActionBody = z
  .strictObject({
    actionId: z.uuid(),
    outcome: z.enum(RESOLVE_OUTCOMES),
    /** The task's status as the operator read it: it must be the unchanged current one. */
    sourceIssueStatus: z.enum(ISSUE_STATUSES),
    /** The recorded source run (and its lease) as the operator reconciled it. */
    executionReconciliation: z.strictObject({
      runId: z.uuid(),
      leaseId: z.uuid().nullable(),
      runStatus: z.enum(RUN_STATUSES),
      /** R-UI-4: only for a cancelled native run, only when its history verifies it; default false. */
      noExternalActionsPerformed: z.boolean().default(false),
    }),
    /** R-FO-5: how the exact allocation was verified stopped, and which files were recovered where. */
    workspaceRepairEvidence: z.strictObject({ stopEvidence: text, recoveredFiles: text }).optional(),
    note: text.optional(),
  })
  // Each outcome's required field is resolvable-holds.ts OUTCOME_REQUIRES, the table the CLI's help prints.
  .superRefine((value, ctx) => {
    const required = OUTCOME_REQUIRES[value.outcome];
    if (value[required] !== undefined) return;
    ctx.addIssue({
      code: "custom",
      path: [required],
      message: required === "note" ? `a note is required for a ${value.outcome} disposition` : `${required} is required when outcome is "${value.outcome}"`,
    });
  });
export type ResolveRecoveryActionBody = z.infer<typeof resolveRecoveryActionBody>;

export interface ResolveRecoveryActionInput extends ResolveRecoveryActionBody {
  companyId: string;
  issueId: string;
  actor: Actor;
}

export interface ResolveRecoveryActionResult {
  actionId: string;
  runId: string;
  leaseIds: string[];
  outcome: ResolveRecoveryActionBody["outcome"];
  /** "resolved" the first time; "already_resolved" for a repeat of the same outcome (nothing written). */
  status: "resolved" | "already_resolved";
}

export const RESOLUTION_EVIDENCE_SCHEMA = "copyback.recovery-resolution.v1";

const loosePointer = z.looseObject({
  runId: z.string().nullish(),
  leaseId: z.string().nullish(),
  leaseIds: z.array(z.string()).nullish(),
  providerLeaseId: z.string().nullish(),
  pluginId: z.string().nullish(),
});

/** The source an action recorded, from its evidence (legacy and file-recovery both name run, lease, allocation, plugin). */
function recordedSource(action: { runId: string | null; leaseId: string | null; evidence: unknown }): RecordedSource {
  const parsed = loosePointer.safeParse(action.evidence);
  const e = parsed.success ? parsed.data : {};
  return {
    runId: action.runId ?? e.runId ?? null,
    leaseId: action.leaseId ?? e.leaseId ?? e.leaseIds?.[0] ?? null,
    providerLeaseId: e.providerLeaseId ?? null,
    pluginId: e.pluginId ?? null,
  };
}

export async function resolveRecoveryAction(db: PrismaClient, input: ResolveRecoveryActionInput): Promise<ResolveRecoveryActionResult> {
  return withTransaction(db, async (tx) => {
    const found = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM issue_recovery_actions WHERE id = ${input.actionId}::uuid AND company_id = ${input.companyId}::uuid AND issue_id = ${input.issueId}::uuid FOR UPDATE`;
    if (found.length !== 1) throw notFound("The recovery action");
    const action = await tx.issueRecoveryAction.findUniqueOrThrow({
      where: { id: input.actionId },
      select: { id: true, cause: true, status: true, outcome: true, issueId: true, runId: true, leaseId: true, evidence: true },
    });
    const source = recordedSource(action);
    const runId = source.runId;
    if (runId) await tx.$queryRaw`SELECT id FROM heartbeat_runs WHERE id = ${runId}::uuid AND company_id = ${input.companyId}::uuid FOR UPDATE`;
    await tx.$queryRaw`SELECT id FROM issues WHERE id = ${input.issueId}::uuid AND company_id = ${input.companyId}::uuid FOR UPDATE`;
    if (source.leaseId) await tx.$queryRaw`SELECT id FROM environment_leases WHERE id = ${source.leaseId}::uuid AND company_id = ${input.companyId}::uuid FOR UPDATE`;
    const issue = await tx.issue.findFirst({ where: { id: input.issueId, companyId: input.companyId }, select: { id: true, status: true } });
    if (!issue) throw notFound("Issue");
    const run = runId
      ? await tx.heartbeatRun.findFirst({ where: { id: runId, companyId: input.companyId }, select: { id: true, nativeIssueId: true, status: true, runtimeMode: true, runnerProfileJson: true } })
      : null;
    const lease = source.leaseId
      ? await tx.environmentLease.findFirst({ where: { id: source.leaseId, companyId: input.companyId }, select: { id: true, runId: true, providerLeaseId: true, pluginId: true, status: true, metadata: true } })
      : null;

    const decision = decideResolve({
      request: input,
      action: { id: action.id, cause: action.cause, status: action.status, outcome: action.outcome, issueId: action.issueId, source },
      issue,
      run: run ? { id: run.id, issueId: run.nativeIssueId, status: run.status, runtimeMode: run.runtimeMode, runnerProfile: run.runnerProfileJson } : null,
      lease,
    });
    if (decision.kind === "reject") throw conflict(decision.code, decision.message, { actionId: action.id, runId: source.runId });
    const result = { actionId: action.id, runId: source.runId ?? "", leaseIds: decision.leaseIds, outcome: input.outcome };
    if (decision.kind === "already_resolved") return { ...result, status: "already_resolved" as const };

    const resolutionEvidence = {
      schema: RESOLUTION_EVIDENCE_SCHEMA,
      outcome: input.outcome,
      sourceIssueStatus: input.sourceIssueStatus,
      executionReconciliation: input.executionReconciliation,
      workspaceRepairEvidence: input.workspaceRepairEvidence ?? null,
      leaseIds: decision.leaseIds,
      verified: decision.verified,
      actor: { type: input.actor.type, id: input.actor.id },
      recordedAt: new Date().toISOString(),
    };
    const won = await recordRecoveryResolution(tx, {
      actionId: action.id,
      outcome: input.outcome,
      status: decision.status,
      actor: input.actor,
      note: input.note ?? null,
      resolutionEvidence,
    });
    if (!won) throw conflict("action_not_open", "The recovery action was resolved meanwhile.", { actionId: action.id });
    await recordActivity(tx, {
      companyId: input.companyId,
      actor: input.actor,
      action: "recovery.action_resolved",
      entityType: "issue_recovery_action",
      entityId: action.id,
      details: { issueId: input.issueId, runId: source.runId, cause: action.cause, outcome: input.outcome, leaseIds: decision.leaseIds, externalActions: decision.verified.externalActions },
    });
    if (run && decision.renewPackBudget) {
      // R-PV-1: the same run reads its pack again when it is claimed; no turn ran before.
      await renewPackBudget(tx, { runId: run.id, actionId: action.id });
      await recordRunEvent(tx, {
        companyId: input.companyId,
        runId: run.id,
        level: "info",
        code: "agent_pack.reverify_requested",
        message: "A runtime manager asked for the agent pack to be verified again; the run goes back to the claim with a fresh read budget.",
        payload: { actionId: action.id },
      });
    } else if (run) {
      await recordRunEvent(tx, {
        companyId: input.companyId,
        runId: run.id,
        level: "info",
        code: "recovery.resolved",
        message:
          input.outcome === "restored"
            ? "A board operator recorded the recovery of this run's files; the run, the task and the retained allocation are unchanged."
            : `A board operator recorded the disposition ${input.outcome}; nothing else changed.`,
        payload: { actionId: action.id, outcome: input.outcome },
      });
    }
    return { ...result, status: "resolved" as const };
  });
}
