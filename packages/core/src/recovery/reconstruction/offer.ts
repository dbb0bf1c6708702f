// The read behind the task notice's "Continue from saved sources" (R-UI-3, R-RC-1): for each open
// export-failure hold of the task whose exact lease has a confirmed destruction receipt, what the
// form needs (the source run and lease, the status version to send back, the task's surviving
// attachments and any intent already recorded). A retained or unverified sandbox gets no offer:
// it must use the export or file recovery path (R-RC-1). The caller checks `runtime:manage`.
import type { PrismaClient } from "@copyback/db/client";
import { confirmedDestruction } from "../../leases/destruction-receipt";
import { OPEN_RECOVERY_ACTION_STATUSES } from "../../records/actions";
import { RECONSTRUCTABLE_CAUSES } from "./decide-reconstruction";
import type { ReconstructionOffer } from "./contract";
import { intentView } from "./intent-view";

export async function reconstructionOffer(db: PrismaClient, key: { companyId: string; issueId: string }): Promise<ReconstructionOffer | null> {
  const issue = await db.issue.findFirst({ where: { id: key.issueId, companyId: key.companyId }, select: { statusVersion: true } });
  if (!issue) return null;
  const actions = await db.issueRecoveryAction.findMany({
    where: { companyId: key.companyId, issueId: key.issueId, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] }, cause: { in: [...RECONSTRUCTABLE_CAUSES] }, leaseId: { not: null }, runId: { not: null } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { id: true, runId: true, leaseId: true },
    take: 20,
  });
  for (const action of actions) {
    const lease = await db.environmentLease.findFirst({ where: { id: action.leaseId as string, companyId: key.companyId } });
    if (!lease || lease.runId !== action.runId) continue;
    // R-RC-1: only the exact lease's confirmed destruction receipt opens the offer.
    const destruction = confirmedDestruction(lease);
    if (destruction.kind !== "confirmed") continue;
    const attachments = await db.issueAttachment.findMany({
      where: { companyId: key.companyId, issueId: key.issueId },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      select: { id: true, fileName: true, sizeBytes: true, sha256: true, createdAt: true },
      take: 500,
    });
    const intent = await db.reconstructionIntent.findUnique({ where: { recoveryActionId: action.id } });
    return {
      actionId: action.id,
      sourceRunId: action.runId as string,
      leaseId: lease.id,
      statusVersion: issue.statusVersion,
      destroyedAt: destruction.receipt.destroyedAt,
      attachments: attachments.map((a) => ({ id: a.id, name: a.fileName, sizeBytes: Number(a.sizeBytes), sha256: a.sha256, createdAt: a.createdAt.toISOString() })),
      pendingIntent: intent && intent.status === "pending" ? intentView(intent) : null,
    };
  }
  return null;
}
