// Why a sandbox is retained, in words for the operator.
// Pure: the facts come from list-retained.ts, one per part of lease-holds.ts's "held" condition,
// so the list says exactly what keeps each allocation.
export interface RetentionFacts {
  /** Open recovery actions that name the lease (its lease_id or evidence leaseIds), oldest first. */
  actions: readonly { id: string; cause: string }[];
  stopIntent: boolean;
  reuseRefused: boolean;
  runStatus: string | null;
  runCommitted: boolean;
  /** The run's accepted result is still being copied back (lease-holds.ts UNSETTLED_FINALIZATION_PHASES). */
  finalizationUnsettled: boolean;
  /** An operator's Discard is recorded on the lease and not finished (discard-intent.ts); absent: none. */
  discarding?: { requestId: string; lastFailureCode: string | null } | null;
}

export type RetentionReason =
  | { kind: "recovery_action"; actionId: string; cause: string; text: string }
  | { kind: "stop_intent"; text: string }
  | { kind: "reuse_refused"; text: string }
  | { kind: "run_not_committed"; runStatus: string; text: string }
  | { kind: "finalization_unsettled"; text: string }
  | { kind: "discarding"; requestId: string; text: string };

const UNCOMMITTED = new Set(["failed", "cancelled", "timed_out"]);

export function retentionReasons(facts: RetentionFacts): RetentionReason[] {
  const reasons: RetentionReason[] = [];
  // First: it says the files may already be gone, which every other reason (files kept) must be read against.
  if (facts.discarding) {
    const failed = facts.discarding.lastFailureCode ? ` Its last try did not finish (${facts.discarding.lastFailureCode}).` : "";
    reasons.push({
      kind: "discarding",
      requestId: facts.discarding.requestId,
      text: `being discarded (request ${facts.discarding.requestId}): an operator gave its files up and its sandbox may already be destroyed; the reconciler finishes the Discard, or Discard again.${failed}`,
    });
  }
  reasons.push(...facts.actions.map((a) => ({
    kind: "recovery_action" as const,
    actionId: a.id,
    cause: a.cause,
    text: `open recovery action ${a.id} (${a.cause}) still needs its files`,
  })));
  if (facts.stopIntent) reasons.push({ kind: "stop_intent", text: "a stop-and-retain intent is recorded (R-EX-4, R-EX-5): the sandbox is kept stopped with its files" });
  if (facts.reuseRefused) reasons.push({ kind: "reuse_refused", text: "its resume could not prove it is the recorded sandbox: never reused, kept for inspection" });
  if (facts.runStatus !== null && UNCOMMITTED.has(facts.runStatus) && !facts.runCommitted) {
    reasons.push({ kind: "run_not_committed", runStatus: facts.runStatus, text: `its run ended ${facts.runStatus} without committing: the sandbox may hold the only copy of that work` });
  }
  if (facts.finalizationUnsettled) {
    reasons.push({ kind: "finalization_unsettled", text: "its run's accepted result is not copied back yet (R-ORP-3): the next attempt exports these files, so the sandbox is never reused or destroyed until that copyback settles" });
  }
  return reasons;
}
