// Reads of open recovery actions (the writer is records/actions.ts): what the task view, the
// board's recovery chip, the company Recovery page and the wake refusal look at.
import type { Prisma } from "@copyback/db/client";
import type { DbOrTx } from "../records/run-log";
import { OPEN_RECOVERY_ACTION_STATUSES, readFilesGivenUp, readOwnerUnverifiedEvidence } from "../records/actions";
import { reconstructionStates, type ReconstructionState } from "./reconstruction-state";
import type { NoticeAction } from "./task-notice";

/** The columns every reader of a recovery action shows (console, REST list, CLI). */
export const recoveryActionSelect = {
  id: true,
  companyId: true,
  issueId: true,
  runId: true,
  leaseId: true,
  cause: true,
  fingerprint: true,
  ownerType: true,
  status: true,
  evidence: true,
  nextAction: true,
  attemptCount: true,
  maxAttempts: true,
  outcome: true,
  resolvedAt: true,
  resolvedByType: true,
  resolutionNote: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.IssueRecoveryActionSelect;
const actionSelect = recoveryActionSelect;

export type OpenActionRow = Prisma.IssueRecoveryActionGetPayload<{ select: typeof actionSelect }>;

/** Recovery is queued: the action records an operator's attestation (R-UI-1). */
export function recoveryQueued(evidence: unknown): boolean {
  return readOwnerUnverifiedEvidence(evidence)?.attestation !== undefined;
}

type NoticeRow = Pick<OpenActionRow, "id" | "cause" | "status" | "runId" | "evidence" | "createdAt">;

/** `reconstruction`: the hold's "Continue from saved sources" intent, if any (R-RC-3, R-RC-5; reconstruction-state.ts). */
export function toNoticeAction(row: NoticeRow & { reconstruction?: ReconstructionState | null }): NoticeAction {
  return {
    id: row.id,
    cause: row.cause,
    status: row.status,
    runId: row.runId,
    recoveryQueued: recoveryQueued(row.evidence),
    filesGivenUp: readFilesGivenUp(row.evidence) !== null,
    createdAt: row.createdAt,
    reconstruction: row.reconstruction ?? null,
  };
}

/** The notice inputs of open holds, each with its reconstruction intent's state (what deriveTaskNotice reads). */
export async function noticeActionsOf(db: DbOrTx, companyId: string, rows: readonly NoticeRow[]): Promise<NoticeAction[]> {
  const states = await reconstructionStates(db, companyId, rows.map((row) => row.id));
  return rows.map((row) => toNoticeAction({ ...row, reconstruction: states.get(row.id) ?? null }));
}

export function listOpenActionsForIssue(db: DbOrTx, companyId: string, issueId: string): Promise<OpenActionRow[]> {
  return db.issueRecoveryAction.findMany({
    where: { companyId, issueId, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: 100,
    select: actionSelect,
  });
}

/** Every open action of a company, oldest first (the Recovery page), keyset-paged by (createdAt, id). */
export function listOpenActionsForCompany(
  db: DbOrTx,
  companyId: string,
  opts: { limit: number; after?: { createdAt: Date; id: string } },
): Promise<(OpenActionRow & { issue: { identifier: string; title: string; status: string } })[]> {
  const after = opts.after;
  return db.issueRecoveryAction.findMany({
    where: {
      companyId,
      status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] },
      ...(after ? { OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }] } : {}),
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: opts.limit,
    select: { ...actionSelect, issue: { select: { identifier: true, title: true, status: true } } },
  });
}

/** The issues among `issueIds` that have open actions, with the notice each one derives (the board's chip). */
export async function openActionsByIssue(db: DbOrTx, companyId: string, issueIds: readonly string[]): Promise<Map<string, NoticeAction[]>> {
  const byIssue = new Map<string, NoticeAction[]>();
  if (issueIds.length === 0) return byIssue;
  const rows = await db.issueRecoveryAction.findMany({
    where: { companyId, issueId: { in: [...issueIds] }, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] } },
    select: { id: true, issueId: true, cause: true, status: true, runId: true, evidence: true, createdAt: true },
  });
  const states = await reconstructionStates(db, companyId, rows.map((row) => row.id));
  for (const row of rows) {
    const list = byIssue.get(row.issueId) ?? [];
    list.push(toNoticeAction({ ...row, reconstruction: states.get(row.id) ?? null }));
    byIssue.set(row.issueId, list);
  }
  return byIssue;
}
