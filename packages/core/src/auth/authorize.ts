// The one authorization decision (pure). Missing or unknown role data denies (R-UI-5).
import { AGENT_PERMISSIONS, BOARD_SUPERUSER_PERMISSIONS, ROLE_PERMISSIONS, isRole, type Permission } from "./permissions";
import type { Principal } from "./principal";

export type AuthorizationDecision =
  | { kind: "allow" }
  | { kind: "deny"; code: "unauthenticated" | "forbidden" | "not_found"; message: string };

const allow = { kind: "allow" } as const;

/**
 * May `principal` use `permission` in `companyId`?
 * - `not_found` when the principal has no standing in the company at all, so another company's
 *   ids read as missing rather than forbidden (DESIGN.md section 5).
 * - `forbidden` when it can see the company but lacks the permission.
 */
export function authorize(principal: Principal, permission: Permission, companyId: string): AuthorizationDecision {
  switch (principal.kind) {
    case "anonymous":
      return { kind: "deny", code: "unauthenticated", message: "Sign in to continue." };
    case "local_board":
      return BOARD_SUPERUSER_PERMISSIONS.has(permission) ? allow : forbidden(permission);
    case "agent":
      if (principal.companyId !== companyId) return notFound();
      return AGENT_PERMISSIONS.has(permission) ? allow : forbidden(permission);
    case "board_user": {
      if (principal.isInstanceAdmin) return BOARD_SUPERUSER_PERMISSIONS.has(permission) ? allow : forbidden(permission);
      const membership = principal.memberships.find((m) => m.companyId === companyId);
      if (!membership) return notFound();
      if (membership.status !== "active") return forbidden(permission, "Your membership in this company is suspended.");
      // R-UI-5: a missing or unrecognised role grants nothing, not even reads.
      if (!isRole(membership.role)) return forbidden(permission, "Your role in this company is unknown; ask an owner to set it.");
      return ROLE_PERMISSIONS[membership.role].has(permission) ? allow : forbidden(permission);
    }
  }
}

/** The companies a principal can at least see; `"all"` for the local board and instance admins. */
export function visibleCompanies(principal: Principal): "all" | string[] {
  switch (principal.kind) {
    case "anonymous":
      return [];
    case "local_board":
      return "all";
    case "agent":
      return [principal.companyId];
    case "board_user":
      if (principal.isInstanceAdmin) return "all";
      return principal.memberships.filter((m) => m.status === "active" && isRole(m.role)).map((m) => m.companyId);
  }
}

function forbidden(permission: Permission, message?: string): AuthorizationDecision {
  return { kind: "deny", code: "forbidden", message: message ?? `This needs the ${permission} permission.` };
}

function notFound(): AuthorizationDecision {
  return { kind: "deny", code: "not_found", message: "Not found." };
}
