// The typed permission registry and the role table, as data (DESIGN.md section 5).
// One place for "who may do what"; tRPC procedures and REST routes both ask `authorize`.

export const PERMISSIONS = {
  "company:read": "See the company, its members and its settings",
  "issues:read": "Read tasks, their conversation, runs and recovery actions",
  "issues:write": "Create and edit tasks, post messages, assign and wake agents",
  "runs:read": "Inspect runs, phases and finalization details",
  "activity:read": "Read the company's activity log",
  // R-UI-3: board operators who may run recovery (retry export, continue from saved sources).
  "runtime:manage": "Operate runtime recovery: export retries, file recovery, reconstruction",
  // R-ATT-2: attest that a copyback owner's controller and copyback stopped.
  "runtime:confirm_owner_stop": "Attest that an unverified copyback owner has stopped",
  // Issue 21 part 5: an environment's configuration decides where agents' code runs and which
  // variable's key is sent to which API; owners and administrators only, not runtime managers.
  "environments:manage": "Create environments and choose the environment each agent runs in",
  "members:manage": "Invite, change roles of and suspend members",
  "api_keys:manage": "Create and revoke board and agent API keys",
  // Agents: only the endpoints for their own runs.
  "agent:finish_run": "Submit the result of the agent's own run",
} as const;

export type Permission = keyof typeof PERMISSIONS;
export const ALL_PERMISSIONS = Object.keys(PERMISSIONS) as Permission[];

export const ROLES = ["owner", "admin", "runtime_manager", "member"] as const;
export type Role = (typeof ROLES)[number];

const BOARD_READ: Permission[] = ["company:read", "issues:read", "runs:read", "activity:read"];

/** What each active company role grants. Suspended memberships grant nothing. */
export const ROLE_PERMISSIONS: Readonly<Record<Role, ReadonlySet<Permission>>> = {
  owner: new Set([...BOARD_READ, "issues:write", "runtime:manage", "runtime:confirm_owner_stop", "environments:manage", "members:manage", "api_keys:manage"]),
  admin: new Set([...BOARD_READ, "issues:write", "runtime:manage", "runtime:confirm_owner_stop", "environments:manage", "members:manage", "api_keys:manage"]),
  // R-ATT-2: runtime managers manage runtime recovery but cannot attest owner stops.
  runtime_manager: new Set([...BOARD_READ, "issues:write", "runtime:manage"]),
  member: new Set([...BOARD_READ, "issues:write"]),
};

/** Board permissions granted to the trusted local board and instance administrators (never agent ones). */
export const BOARD_SUPERUSER_PERMISSIONS: ReadonlySet<Permission> = new Set(
  ALL_PERMISSIONS.filter((p) => p !== "agent:finish_run"),
);

export const AGENT_PERMISSIONS: ReadonlySet<Permission> = new Set(["agent:finish_run"]);

export function isPermission(value: string): value is Permission {
  return Object.hasOwn(PERMISSIONS, value);
}

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}
