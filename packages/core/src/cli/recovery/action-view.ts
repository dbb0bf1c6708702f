// What the `recovery` commands read of a recovery action: the row (written only by
// records/actions.ts), its company and task, as one flat view for text and --json. Reads only.
import type { Prisma, PrismaClient } from "@copyback/db/client";
import { OPEN_RECOVERY_ACTION_STATUSES } from "../../records/actions";
import { recoveryActionSelect, recoveryQueued } from "../../recovery/holds";

const viewSelect = {
  ...recoveryActionSelect,
  company: { select: { name: true } },
  issue: { select: { identifier: true, title: true, status: true } },
} satisfies Prisma.IssueRecoveryActionSelect;

type ViewRow = Prisma.IssueRecoveryActionGetPayload<{ select: typeof viewSelect }>;

export interface RecoveryActionView {
  id: string;
  companyId: string;
  companyName: string;
  issueId: string;
  issueIdentifier: string;
  issueTitle: string;
  issueStatus: string;
  runId: string | null;
  leaseId: string | null;
  cause: string;
  status: string;
  ownerType: string;
  /** An operator's attestation is recorded: the reconciler is restoring the saved work. */
  attested: boolean;
  nextAction: string | null;
  attemptCount: number;
  maxAttempts: number | null;
  outcome: string | null;
  createdAt: string;
  updatedAt: string;
  resolvedAt: string | null;
  ageSeconds: number;
}

export function toView(row: ViewRow, now: Date): RecoveryActionView {
  return {
    id: row.id,
    companyId: row.companyId,
    companyName: row.company.name,
    issueId: row.issueId,
    issueIdentifier: row.issue.identifier,
    issueTitle: row.issue.title,
    issueStatus: row.issue.status,
    runId: row.runId,
    leaseId: row.leaseId,
    cause: row.cause,
    status: row.status,
    ownerType: row.ownerType,
    attested: recoveryQueued(row.evidence),
    nextAction: row.nextAction,
    attemptCount: row.attemptCount,
    maxAttempts: row.maxAttempts,
    outcome: row.outcome,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    resolvedAt: row.resolvedAt?.toISOString() ?? null,
    ageSeconds: Math.max(0, Math.floor((now.getTime() - row.createdAt.getTime()) / 1000)),
  };
}

/** Open actions of every company (or one), oldest first; `total` counts all of them. */
export async function listOpenActions(
  db: PrismaClient,
  opts: { companyId?: string; limit: number },
): Promise<{ rows: ViewRow[]; total: number }> {
  const where = {
    status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] },
    ...(opts.companyId === undefined ? {} : { companyId: opts.companyId }),
  } satisfies Prisma.IssueRecoveryActionWhereInput;
  const [rows, total] = await Promise.all([
    db.issueRecoveryAction.findMany({
      where,
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      take: opts.limit,
      select: viewSelect,
    }),
    db.issueRecoveryAction.count({ where }),
  ]);
  return { rows, total };
}

/** One action by id, open or not (an instance operator sees every company's). */
export function findAction(db: PrismaClient, actionId: string): Promise<ViewRow | null> {
  return db.issueRecoveryAction.findUnique({ where: { id: actionId }, select: viewSelect });
}
