// The principals of the authorization matrix: who is asking, and what the permission table should
// make of them. Each has a `model` (the facts `expectedOutcome` reads: role, status, standing in
// company A) and travels in requests as one `Credential` built by `buildMatrixWorld`.
import type { Principal } from "@copyback/core/auth";

export const PRINCIPAL_NAMES = [
  "anonymous",
  "member",
  "runtime_manager",
  "admin",
  "owner",
  "suspended_member",
  "other_company_owner",
  "instance_admin",
  "local_board",
  // Local mode: a process on this machine (an agent with network, a script) that reaches the
  // loopback port without the console cookie, and one with a cookie of another secret: anonymous.
  "local_process",
  "forged_console_cookie",
  "agent_key",
  "other_agent_key",
  "owner_board_key",
  "revoked_key",
  // R-UI-5: role data the database cannot hold (its enum refuses it), so these two are
  // constructed principals (see constructed-principal.ts).
  "unknown_role",
  "missing_role",
] as const;

export type PrincipalName = (typeof PRINCIPAL_NAMES)[number];

/** What the permission table is asked about a principal; company A is the company every cell targets. */
export type PrincipalModel =
  | { kind: "anonymous" }
  /** A revoked (or otherwise dead) bearer key: refused before anything else, never anonymous. */
  | { kind: "rejected_credential" }
  /** A board user with a membership row in company A (role and status as stored, or as constructed). */
  | {
      kind: "member_of_a";
      role: string | null;
      status: "active" | "suspended";
      via: "session" | "board_api_key";
    }
  /** A board user with no standing in company A (an owner of company B). */
  | { kind: "outsider" }
  /** The trusted local board and instance administrators: every board permission, in every company. */
  | { kind: "board_superuser" }
  /** An agent of company A; `ownsRun` says whether the matrix's run is its own. */
  | { kind: "agent_of_a"; ownsRun: boolean };

export const PRINCIPAL_MODELS: Readonly<Record<PrincipalName, PrincipalModel>> = {
  anonymous: { kind: "anonymous" },
  member: { kind: "member_of_a", role: "member", status: "active", via: "session" },
  runtime_manager: {
    kind: "member_of_a",
    role: "runtime_manager",
    status: "active",
    via: "session",
  },
  admin: { kind: "member_of_a", role: "admin", status: "active", via: "session" },
  owner: { kind: "member_of_a", role: "owner", status: "active", via: "session" },
  suspended_member: { kind: "member_of_a", role: "member", status: "suspended", via: "session" },
  other_company_owner: { kind: "outsider" },
  instance_admin: { kind: "board_superuser" },
  local_board: { kind: "board_superuser" },
  local_process: { kind: "anonymous" },
  forged_console_cookie: { kind: "anonymous" },
  agent_key: { kind: "agent_of_a", ownsRun: true },
  other_agent_key: { kind: "agent_of_a", ownsRun: false },
  owner_board_key: { kind: "member_of_a", role: "owner", status: "active", via: "board_api_key" },
  revoked_key: { kind: "rejected_credential" },
  unknown_role: { kind: "member_of_a", role: "superuser", status: "active", via: "session" },
  missing_role: { kind: "member_of_a", role: null, status: "active", via: "session" },
};

/** How a principal's request carries who it is. */
export type Credential =
  /** No credential at all (authenticated mode: anonymous). */
  | { kind: "none" }
  /** A better-auth session cookie from a real sign-in. */
  | { kind: "session"; cookie: string }
  | { kind: "bearer"; secret: string }
  /**
   * Local mode: a request addressed to the loopback name the console listens on, with the Cookie
   * header it carries (the console cookie of the sign-in link, a forged one, or none).
   */
  | { kind: "loopback"; cookie?: string }
  /** Local mode: a page that rebound its own name to 127.0.0.1 (its Host is not loopback): anonymous, cookie or not. */
  | { kind: "rebinding_host"; cookie?: string }
  /** A principal the database cannot produce, injected at principal resolution (R-UI-5). */
  | { kind: "constructed"; principal: Principal };

/** Ambient credentials are the ones a browser sends by itself: their mutations carry same-origin headers. */
export function isAmbient(credential: Credential): boolean {
  return (
    credential.kind === "session" ||
    credential.kind === "loopback" ||
    credential.kind === "constructed"
  );
}

const LOCAL_ONLY: readonly PrincipalName[] = ["local_board", "local_process", "forged_console_cookie"];

/** Principals run in authenticated mode (every one but the local-mode ones). */
export const AUTHENTICATED_MODE_PRINCIPALS: readonly PrincipalName[] = PRINCIPAL_NAMES.filter(
  (name) => !LOCAL_ONLY.includes(name),
);

/**
 * Principals run in local mode: the trusted local board (the console cookie on a loopback Host),
 * a local process without the cookie and one with a forged cookie (an agent that reaches
 * 127.0.0.1 is not the board), a DNS-rebinding page (a non-loopback Host, anonymous even with the
 * cookie), and bearer keys, which work the same in both modes.
 */
export const LOCAL_MODE_PRINCIPALS: readonly PrincipalName[] = [
  "local_board",
  "local_process",
  "forged_console_cookie",
  "anonymous",
  "agent_key",
  "owner_board_key",
  "revoked_key",
];
