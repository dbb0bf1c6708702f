// Who is asking. Built by the web shell from a session, an API key, or local mode.
import type { Role } from "./permissions";

export interface Membership {
  companyId: string;
  /** Unknown strings are kept as-is so that `authorize` can deny them (R-UI-5). */
  role: Role | (string & {}) | null;
  status: "active" | "suspended" | (string & {}) | null;
}

export type Principal =
  | { kind: "anonymous" }
  /** Local deployment mode only: the operator at this machine (the spec's "trusted local board"). */
  | { kind: "local_board" }
  | { kind: "board_user"; userId: string; isInstanceAdmin: boolean; memberships: readonly Membership[]; via: "session" | "board_api_key" }
  /** `runId`: a run-scoped key, good only for that run's finish call while it runs. */
  | { kind: "agent"; agentId: string; companyId: string; keyId: string; runId?: string };
