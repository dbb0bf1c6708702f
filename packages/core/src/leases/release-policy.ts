// What happens to a lease when its run ends, pure.
//
//                        committed              failed            agent_not_started
//   ephemeral            destroy                stop and retain   destroy
//   reuse_by_environment stop and retain        stop and retain   stop and retain
//   retain_on_failure    destroy                stop and retain   destroy
//
// A failed run's sandbox is always kept, ephemeral included: its files are the only copy of
// work the recovery issue may still export (R-EX-4). Destroy happens only after the commit, or
// when the run was refused before its agent was ever started in the sandbox (`agent_not_started`,
// a reconstruction's sources refused at placement, R-FO-1 scope): the sandbox then holds only the
// seed, a copy of the host workspace, and the inputs the controller placed outside it, so nothing
// in it is anyone's work and the policy treats it as it treats a sandbox whose work was committed.
import type { LeasePolicy } from "./lease-types";

export type ReleaseDecision = { kind: "destroy" } | { kind: "stop_and_retain" };

export type RunEndForLease = "committed" | "failed" | "agent_not_started";

export function decideLeaseRelease(policy: LeasePolicy, outcome: RunEndForLease): ReleaseDecision {
  if (outcome === "failed" || policy === "reuse_by_environment") return { kind: "stop_and_retain" };
  return { kind: "destroy" };
}
