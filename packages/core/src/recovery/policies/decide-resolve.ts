// Generic resolution of a recovery action (POST .../recovery-actions/resolve), pure. Its full
// rules (R-RR-5: file-only repair with the unchanged status, execution reconciliation and
// evidence) come with the file-recovery work; one rule holds already (R-ATT-3): generic
// resolution, false-positive dispositions included, can never dismiss or bypass an unverified
// copyback owner hold — only the run's committed copyback resolves it, after an operator's stop
// attestation.
import { OWNER_UNVERIFIED_CAUSE } from "../causes";

export type ResolveDecision =
  | { kind: "reject"; code: "hold_requires_attestation"; message: string }
  /** The remaining rules are not built yet (the route answers 501). */
  | { kind: "not_implemented" };

export function decideResolve(action: { cause: string }): ResolveDecision {
  if (action.cause === OWNER_UNVERIFIED_CAUSE) {
    return {
      kind: "reject",
      code: "hold_requires_attestation",
      message:
        "An unverified copyback owner hold cannot be resolved here: attest the stop (POST /api/issues/:id/recovery-actions/resume-workspace-finalization); the run's committed copyback then resolves it.",
    };
  }
  return { kind: "not_implemented" };
}
