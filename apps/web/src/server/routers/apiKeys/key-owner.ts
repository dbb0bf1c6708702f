// Whose role a new board API key carries. A key acts as one user in one company (see
// auth/key-principal.ts), so that user must be an active member there with a known role.
import type { Principal } from "@copyback/core/auth";
import { isRole } from "@copyback/core/auth";
import { DomainError, invalid } from "@copyback/core/errors";
import type { TransactionClient } from "@copyback/db/client";

/** A key never mints keys: a leaked key must not be able to outlive its own revocation. */
export function assertNotMintedByKey(principal: Principal): void {
  if (principal.kind === "board_user" && principal.via !== "session") {
    throw new DomainError("forbidden", "session_required", "API keys cannot create API keys; sign in to the console to create one.");
  }
}

export async function keyOwnerFor(tx: TransactionClient, principal: Principal, companyId: string, requestedUserId: string | undefined): Promise<string> {
  let userId: string;
  switch (principal.kind) {
    case "board_user":
      assertNotMintedByKey(principal);
      if (requestedUserId !== undefined && requestedUserId !== principal.userId) {
        throw new DomainError("forbidden", "own_keys_only", "You can create board API keys only for yourself.");
      }
      userId = principal.userId;
      break;
    case "local_board":
      // The local board has no user row: it names the member whose role the key will carry.
      if (requestedUserId === undefined) throw invalid("user_required", "Choose the member whose role the key acts with.");
      userId = requestedUserId;
      break;
    default:
      throw new DomainError("forbidden", "forbidden", "This needs the api_keys:manage permission.");
  }
  const membership = await tx.companyMembership.findUnique({ where: { companyId_userId: { companyId, userId } }, select: { role: true, status: true } });
  if (!membership || membership.status !== "active" || !isRole(membership.role)) {
    throw invalid("user_not_member", "A board API key acts with its user's role in this company; that user has no active membership here.");
  }
  return userId;
}
