// Applies one membership change (role or status) with its audit row, in one transaction that
// holds the company row lock: concurrent changes in one company run one after the other, so two
// owners demoting each other cannot both see "another owner remains" (last_owner).
import { Prisma, withTransaction, type PrismaClient } from "@copyback/db/client";
import type { Principal } from "../auth/principal";
import { notFound } from "../errors";
import { recordActivity, type Actor } from "../records/record-activity";
import { membershipChangeError, type MembershipState } from "./membership-policy";

export interface MembershipChangeRequest {
  db: PrismaClient;
  principal: Principal;
  /** How the activity log records the principal (the web shell's actorOf). */
  actor: Actor;
  companyId: string;
  membershipId: string;
  change: Partial<MembershipState>;
}

export async function applyMembershipChange(
  request: MembershipChangeRequest,
): Promise<{ id: string } & MembershipState> {
  const { companyId, actor } = request;
  return withTransaction(request.db, async (tx) => {
    await tx.$queryRaw(
      Prisma.sql`SELECT id FROM companies WHERE id = ${companyId}::uuid FOR UPDATE`,
    );
    const membership = await tx.companyMembership.findFirst({
      where: { id: request.membershipId, companyId },
      select: { id: true, role: true, status: true },
    });
    if (!membership) throw notFound("The membership");
    const current: MembershipState = { role: membership.role, status: membership.status };
    const next: MembershipState = {
      role: request.change.role ?? current.role,
      status: request.change.status ?? current.status,
    };
    if (next.role === current.role && next.status === current.status)
      return { id: membership.id, ...current };

    const activeOwnerCount = await tx.companyMembership.count({
      where: { companyId, role: "owner", status: "active" },
    });
    const refusal = membershipChangeError({
      principal: request.principal,
      companyId,
      current,
      next,
      activeOwnerCount,
    });
    if (refusal) throw refusal;

    await tx.companyMembership.update({
      where: { id: membership.id },
      data: { role: next.role, status: next.status },
    });
    if (next.role !== current.role) {
      await recordActivity(tx, {
        companyId,
        actor,
        action: "membership.role_changed",
        entityType: "company_membership",
        entityId: membership.id,
        details: { from: current.role, to: next.role },
      });
    }
    if (next.status !== current.status) {
      await recordActivity(tx, {
        companyId,
        actor,
        action: "membership.status_changed",
        entityType: "company_membership",
        entityId: membership.id,
        details: { from: current.status, to: next.status },
      });
    }
    return { id: membership.id, ...next };
  });
}
