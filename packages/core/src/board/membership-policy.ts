// Pure rules for changing a membership (role or status), apart from the I/O that applies them.
import type { Role } from "../auth/permissions";
import type { Principal } from "../auth/principal";
import { DomainError, conflict } from "../errors";

export interface MembershipState {
  role: Role;
  status: "active" | "suspended";
}

export const LAST_OWNER = "last_owner";
export const OWNER_REQUIRED = "owner_required";

/**
 * May `principal` move a membership from `current` to `next`?
 * - The company never loses its last active owner (CONFLICT `last_owner`): someone must always
 *   be able to manage members and attest stops.
 * - Only owners (and the local board or instance administrators) grant, remove or suspend the
 *   owner role: an admin holding members:manage cannot make itself owner or remove an owner.
 * Returns null when allowed.
 */
export function membershipChangeError(input: {
  principal: Principal;
  companyId: string;
  current: MembershipState;
  next: MembershipState;
  activeOwnerCount: number;
}): DomainError | null {
  const { current, next } = input;
  const touchesOwner = current.role === "owner" || next.role === "owner";
  if (touchesOwner && !hasOwnerAuthority(input.principal, input.companyId)) {
    return new DomainError(
      "forbidden",
      OWNER_REQUIRED,
      "Only an owner can change an owner's membership or make someone an owner.",
    );
  }
  const wasActiveOwner = current.role === "owner" && current.status === "active";
  const staysActiveOwner = next.role === "owner" && next.status === "active";
  if (wasActiveOwner && !staysActiveOwner && input.activeOwnerCount <= 1) {
    return conflict(
      LAST_OWNER,
      "This is the company's last active owner. Make someone else an owner first.",
    );
  }
  return null;
}

export function hasOwnerAuthority(principal: Principal, companyId: string): boolean {
  switch (principal.kind) {
    case "local_board":
      return true;
    case "board_user":
      return (
        principal.isInstanceAdmin ||
        principal.memberships.some(
          (m) => m.companyId === companyId && m.role === "owner" && m.status === "active",
        )
      );
    default:
      return false;
  }
}
