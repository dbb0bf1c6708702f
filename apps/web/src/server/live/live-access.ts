// Who may subscribe to a company's live changes: whoever may read its issues (`issues:read`),
// the same check as the issue pages. Another company's id reads as not found (DESIGN.md 5),
// and so does an id no company has (the local board and instance admins may read any company).
import type { PrismaClient } from "@copyback/db/client";
import { authorize, type Principal } from "@copyback/core/auth";
import { DomainError } from "@copyback/core/errors";

export const LIVE_PERMISSION = "issues:read" as const;

export async function liveAccessError(
  db: Pick<PrismaClient, "company">,
  principal: Principal,
  companyId: string,
): Promise<DomainError | null> {
  const decision = authorize(principal, LIVE_PERMISSION, companyId);
  if (decision.kind === "deny")
    return new DomainError(decision.code, decision.code, decision.message);
  const company = await db.company.findUnique({ where: { id: companyId }, select: { id: true } });
  return company ? null : new DomainError("not_found", "not_found", "Not found.");
}
