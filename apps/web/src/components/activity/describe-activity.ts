// One sentence per audit row, for the activity page. Unknown actions still read sensibly, so a
// new writer never breaks the page.
import { ISSUE_STATUS_LABEL } from "~/components/ui/issue-status-badge";
import { isIssueStatus } from "~/server/routers/issues/issue-status";

const ROLE_LABEL: Record<string, string> = {
  owner: "owner",
  admin: "admin",
  runtime_manager: "runtime manager",
  member: "member",
};

function status(value: unknown): string {
  return isIssueStatus(value) ? ISSUE_STATUS_LABEL[value] : String(value);
}

function role(value: unknown): string {
  return typeof value === "string" ? (ROLE_LABEL[value] ?? value) : String(value);
}

function withArticle(noun: string): string {
  return /^[aeiou]/i.test(noun) ? `an ${noun}` : `a ${noun}`;
}

export interface ActivityPhrase {
  /** Follows the actor's name; the entity (e.g. "ACME-12") comes next when there is one. */
  verb: string;
  /** Follows the entity. */
  suffix?: string;
}

/** "Ada Lovelace" + verb + [ACME-12] + suffix. */
export function describeActivity(action: string, details: Record<string, unknown>): ActivityPhrase {
  switch (action) {
    case "issue.created":
      return { verb: "created" };
    case "issue.status_changed":
      return { verb: "moved", suffix: `from ${status(details.from)} to ${status(details.to)}` };
    case "issue.message_posted":
      return { verb: "posted a message on" };
    case "membership.created":
      return { verb: `added ${withArticle(role(details.role))}` };
    case "membership.role_changed":
      return { verb: `changed a member's role from ${role(details.from)} to ${role(details.to)}` };
    case "membership.status_changed":
      return { verb: details.to === "suspended" ? "suspended a member" : "reactivated a member" };
    case "agent.created":
      return {
        verb:
          typeof details.name === "string"
            ? `created the agent ${details.name}`
            : "created an agent",
      };
    // Issue 21 part 5: the Environments page and `copyback environment create` / `agent set-environment`.
    case "environment.created":
      return {
        verb:
          typeof details.name === "string"
            ? `created the environment ${details.name}${typeof details.provider === "string" ? ` (${details.provider})` : ""}`
            : "created an environment",
      };
    case "agent.environment_changed":
      return {
        verb:
          typeof details.environmentName === "string"
            ? `pointed an agent at the environment ${details.environmentName}`
            : "changed an agent's environment",
      };
    case "company.created":
      return { verb: "created the company" };
    // Reconstruction (R-RC-3, R-RC-5): the operator's decision and what became of it.
    case "recovery.reconstruction_recorded":
      return { verb: "chose to continue from saved sources on" };
    case "recovery.reconstruction_delivered":
      return { verb: "started a fresh session from saved sources on" };
    case "recovery.reconstruction_cancelled":
    case "recovery.reconstruction_withdrawn":
      return { verb: "withdrew continuing from saved sources on", suffix: "(it needs a fresh decision)" };
    default:
      return { verb: action.replaceAll("_", " ").replace(".", ": ") };
  }
}
