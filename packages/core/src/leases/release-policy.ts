// What happens to a lease when its run ends (issue 5 item 7), pure.
//
//   ephemeral            committed -> destroy          failed -> stop and retain
//   reuse_by_environment committed -> stop and retain  failed -> stop and retain
//   retain_on_failure    committed -> destroy          failed -> stop and retain
//
// A failed run's sandbox is always kept, ephemeral included: its files are the only copy of
// work the recovery issue may still export (R-EX-4). Destroy happens only after the commit.
import type { LeasePolicy } from "./lease-types";

export type ReleaseDecision = { kind: "destroy" } | { kind: "stop_and_retain" };

export function decideLeaseRelease(policy: LeasePolicy, outcome: "committed" | "failed"): ReleaseDecision {
  if (outcome === "failed" || policy === "reuse_by_environment") return { kind: "stop_and_retain" };
  return { kind: "destroy" };
}
