// The authorization matrix's expectation table: what every tRPC procedure and every route.ts
// handler under src/app/api requires, and what the permission table (ROLE_PERMISSIONS,
// BOARD_SUPERUSER_PERMISSIONS, AGENT_PERMISSIONS) then says each principal gets.
//
// Adding a procedure or a route without an entry here fails the matrix (the enumerated set must
// equal the table's keys), and so does an entry whose procedure or route is gone.
import {
  AGENT_PERMISSIONS,
  BOARD_SUPERUSER_PERMISSIONS,
  ROLE_PERMISSIONS,
  isRole,
  type Permission,
} from "@copyback/core/auth";
import type { PrincipalModel, PrincipalName } from "./principals";

export type Access =
  /** Anyone, signed in or not; a dead bearer key is still refused (it never degrades to anonymous). */
  | { kind: "public" }
  /** Any principal that is not anonymous. */
  | { kind: "authenticated" }
  /**
   * One permission in the target company. `sessionOnly`: board API keys are refused even when
   * their role holds the permission (a key never mints keys: it must not outlive its revocation).
   */
  | { kind: "permission"; permission: Permission; sessionOnly?: true }
  /** `agent:finish_run`, and only the run's own agent. */
  | { kind: "agent-own-run" }
  /**
   * A board permission, and for agents instead: the run-scoped key of a run of the task itself
   * (R-RC-5, the route's agentAccess). The matrix's agent keys are standing keys: not found.
   */
  | { kind: "permission-or-task-run-agent"; permission: Permission }
  /** better-auth's own endpoints: our principals play no part; local mode has no sign-in at all. */
  | { kind: "sign-in-service" }
  /**
   * Local mode's sign-in link (GET /api/local-sign-in): the secret in its token decides, never who
   * asks; the matrix sends a wrong token (401 invalid_sign_in_link). Authenticated mode: 404.
   */
  | { kind: "console-sign-in-link" }
  /** tRPC's HTTP transport: each procedure's own entry decides (the matrix's HTTP pass goes through it). */
  | { kind: "trpc-transport" }
  /**
   * Instance-wide reads (GET /api/metrics): the trusted local board and instance
   * administrators only; a company role, however high, is forbidden (core metrics/access.ts).
   */
  | { kind: "instance-superuser" };

const PUBLIC: Access = { kind: "public" };
const AUTHENTICATED: Access = { kind: "authenticated" };
const perm = (permission: Permission, options: { sessionOnly?: true } = {}): Access => ({
  kind: "permission",
  permission,
  ...options,
});

/** Every tRPC procedure, by path. */
export const PROCEDURE_ACCESS: Readonly<Record<string, Access>> = {
  "activity.list": perm("activity:read"),
  "agentKeys.list": perm("api_keys:manage"),
  "agentKeys.create": perm("api_keys:manage", { sessionOnly: true }),
  "agentKeys.revoke": perm("api_keys:manage"),
  "agents.list": perm("issues:read"),
  // Issue 21 part 5: where an agent's code runs; owners and administrators, not runtime managers.
  "agents.setEnvironment": perm("environments:manage"),
  "apiKeys.list": perm("api_keys:manage"),
  "apiKeys.create": perm("api_keys:manage", { sessionOnly: true }),
  "apiKeys.revoke": perm("api_keys:manage"),
  "companies.list": AUTHENTICATED,
  "companies.get": perm("company:read"),
  // Environments: read by the same runtime operators as Retained sandboxes.
  "environments.list": perm("runtime:manage"),
  "environments.create": perm("environments:manage"),
  "health.get": PUBLIC,
  "issues.list": perm("issues:read"),
  "issues.get": perm("issues:read"),
  "issues.messages": perm("issues:read"),
  "issues.attachments": perm("issues:read"),
  "issues.addMessage": perm("issues:write"),
  "issues.updateStatus": perm("issues:write"),
  // "assign and wake agents" is part of issues:write.
  "issues.assignAgent": perm("issues:write"),
  "issues.wake": perm("issues:write"),
  "me.get": PUBLIC,
  "members.list": perm("company:read"),
  "members.updateRole": perm("members:manage"),
  "members.setStatus": perm("members:manage"),
  // The task's notice for every reader; its Recovery details are layered inside (R-UI-2).
  "recovery.forIssue": perm("issues:read"),
  "recovery.listOpen": perm("issues:read"),
  // R-ATT-2: the same permission as POST .../resume-workspace-finalization.
  "recovery.attestOwnerStop": perm("runtime:confirm_owner_stop"),
  "recovery.retryWorkspaceExport": perm("runtime:manage"),
  "recovery.reconstructionOffer": perm("runtime:manage"),
  "recovery.reconstructWorkspace": perm("runtime:manage"),
  "recovery.resolve": perm("runtime:manage"),
  "runs.get": perm("runs:read"),
  "runs.listForIssue": perm("runs:read"),
  "runs.latestForIssue": perm("runs:read"),
  // The plain file view (R-UI-2 keeps only diagnostics with operators).
  "runs.workspace": perm("runs:read"),
  "runs.agentOutput": perm("runs:read"),
  // R-UI-2: finalization details are operator diagnostics.
  "runs.finalization": perm("runtime:manage"),
  // R-RC-7, R-RR-7: Stop and Retry are task work, like Wake.
  "runs.stop": perm("issues:write"),
  "runs.retry": perm("issues:write"),
  // Retained sandboxes: runtime operators.
  "sandboxes.listRetained": perm("runtime:manage"),
  "sandboxes.discard": perm("runtime:manage"),
  // Workspace history: the run page's written paths.
  "workspaces.pathHistory": perm("runs:read"),
};

/** Every exported handler of a route.ts under src/app/api, as "METHOD /api/path/:param". */
export const ROUTE_ACCESS: Readonly<Record<string, Access>> = {
  "GET /api/auth/:all": { kind: "sign-in-service" },
  "POST /api/auth/:all": { kind: "sign-in-service" },
  "GET /api/environment-leases/:leaseId": perm("runs:read"),
  // Live updates: the same check as the issue pages (server/live/live-access.ts).
  "GET /api/events": perm("issues:read"),
  "GET /api/health": PUBLIC,
  "GET /api/livez": PUBLIC,
  "GET /api/readyz": PUBLIC,
  "GET /api/issues/:id/recovery-actions": perm("issues:read"),
  "GET /api/issues/:id/attachments": perm("issues:read"),
  // Attaching a file is task work, like posting a message.
  "POST /api/issues/:id/attachments": perm("issues:write"),
  "GET /api/issues/:id/attachments/:attachmentId/content": { kind: "permission-or-task-run-agent", permission: "issues:read" },
  "GET /api/local-sign-in": { kind: "console-sign-in-link" },
  "GET /api/metrics": { kind: "instance-superuser" },
  "POST /api/issues/:id/recovery-actions/reconstruct-workspace": perm("runtime:manage"),
  "POST /api/issues/:id/recovery-actions/resolve": perm("runtime:manage"),
  "POST /api/issues/:id/recovery-actions/resume-workspace-finalization": perm(
    "runtime:confirm_owner_stop",
  ),
  "POST /api/issues/:id/recovery-actions/retry-workspace-export": perm("runtime:manage"),
  "GET /api/runs/:id": perm("runs:read"),
  "GET /api/runs/:id/agent-output": perm("runs:read"),
  "POST /api/runs/:id/finish": { kind: "agent-own-run" },
  "POST /api/runs/:id/stop": perm("issues:write"),
  "GET /api/trpc/:trpc": { kind: "trpc-transport" },
  "POST /api/trpc/:trpc": { kind: "trpc-transport" },
};

/**
 * Cells where authorization allows but the domain refuses every possible input, each with why.
 * The matrix asserts exactly this refusal there (and that nothing changed).
 */
export const DOMAIN_REFUSALS: Readonly<
  Record<string, Partial<Record<PrincipalName, { code: string; domainCode: string; why: string }>>>
> = {
  "apiKeys.create": {
    instance_admin: {
      code: "UNPROCESSABLE_CONTENT",
      domainCode: "user_not_member",
      why: "a board key acts with its own user's role in the company, and a signed-in user may only create keys for themself; an instance administrator without a membership has no role there to give a key",
    },
  },
};

/** The spec rules a cell proves, for its test name. */
export function ruleIdsOf(access: Access, principal: PrincipalName): string[] {
  const ids: string[] = [];
  if (access.kind === "permission" && access.permission === "runtime:confirm_owner_stop")
    ids.push("R-ATT-2");
  if (access.kind === "permission" && access.permission === "runtime:manage") ids.push("R-UI-3");
  if (principal === "unknown_role" || principal === "missing_role") ids.push("R-UI-5");
  return ids;
}

export type DenyKind = "unauthenticated" | "forbidden" | "not_found";

export type Expected =
  | { kind: "allow" }
  /** `domainCode`: the stable code the refusal must carry (unchecked when absent). */
  | { kind: "deny"; deny: DenyKind; domainCode?: string };

const ALLOW: Expected = { kind: "allow" };
const deny = (kind: DenyKind, domainCode?: string): Expected => ({
  kind: "deny",
  deny: kind,
  ...(domainCode ? { domainCode } : {}),
});

export type DeploymentMode = "local" | "authenticated";

/**
 * What `access` should give `model` in company A, read from the permission table's data (not from
 * `authorize`, so that the matrix checks `authorize` too). Refusals: unauthenticated for no or a
 * dead credential, not_found for a principal with no standing in company A (another company's
 * resources read as missing), forbidden otherwise.
 */
export function expectedOutcome(
  access: Access,
  model: PrincipalModel,
  mode: DeploymentMode,
): Expected {
  if (access.kind === "trpc-transport")
    throw new Error("the tRPC transport has no outcome of its own; each procedure's entry decides");
  if (access.kind === "sign-in-service")
    return mode === "local" ? deny("not_found", "sign_in_disabled") : ALLOW;
  if (access.kind === "console-sign-in-link")
    return mode === "local" ? deny("unauthenticated", "invalid_sign_in_link") : deny("not_found", "sign_in_disabled");
  if (model.kind === "rejected_credential") return deny("unauthenticated", "invalid_api_key");
  if (access.kind === "public") return ALLOW;
  if (model.kind === "anonymous") return deny("unauthenticated");
  if (access.kind === "authenticated") return ALLOW;
  if (access.kind === "instance-superuser") return model.kind === "board_superuser" ? ALLOW : deny("forbidden", "forbidden");

  // R-RC-5: agents other than the task's own run's read not found (the matrix's keys are standing keys).
  if (access.kind === "permission-or-task-run-agent" && model.kind === "agent_of_a") return deny("not_found", "not_found");
  const permission: Permission =
    access.kind === "agent-own-run" ? "agent:finish_run" : access.permission;
  const granted = fromPermissionTable(model, permission);
  if (granted.kind === "deny") return granted;
  if (access.kind === "agent-own-run" && !(model.kind === "agent_of_a" && model.ownsRun))
    return deny("forbidden", "not_run_agent");
  if (
    access.kind === "permission" &&
    access.sessionOnly &&
    model.kind === "member_of_a" &&
    model.via === "board_api_key"
  ) {
    return deny("forbidden", "session_required");
  }
  return ALLOW;
}

function fromPermissionTable(
  model: Exclude<PrincipalModel, { kind: "anonymous" | "rejected_credential" }>,
  permission: Permission,
): Expected {
  switch (model.kind) {
    case "outsider":
      return deny("not_found", "not_found");
    case "board_superuser":
      return BOARD_SUPERUSER_PERMISSIONS.has(permission) ? ALLOW : deny("forbidden", "forbidden");
    case "agent_of_a":
      return AGENT_PERMISSIONS.has(permission) ? ALLOW : deny("forbidden", "forbidden");
    case "member_of_a":
      // Suspended memberships grant nothing.
      if (model.status !== "active") return deny("forbidden", "forbidden");
      // R-UI-5: missing or unknown role data grants nothing.
      if (!isRole(model.role)) return deny("forbidden", "forbidden");
      return ROLE_PERMISSIONS[model.role].has(permission) ? ALLOW : deny("forbidden", "forbidden");
  }
}

/** Does the principal have standing in company A, so that company lists show it? */
export function seesCompanyA(model: PrincipalModel): boolean {
  switch (model.kind) {
    case "board_superuser":
    case "agent_of_a":
      return true;
    case "member_of_a":
      return model.status === "active" && isRole(model.role);
    default:
      return false;
  }
}

export const HTTP_STATUS_OF: Readonly<Record<DenyKind, number>> = {
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
};
export const TRPC_CODE_OF: Readonly<Record<DenyKind, string>> = {
  unauthenticated: "UNAUTHORIZED",
  forbidden: "FORBIDDEN",
  not_found: "NOT_FOUND",
};

/** "allow", or the HTTP status of the refusal: the last word of a cell's test name. */
export function describeExpected(expected: Expected): string {
  return expected.kind === "allow" ? "allow" : String(HTTP_STATUS_OF[expected.deny]);
}
