// R-RW-3, R-RW-4: admission of an automatic takeover, pure. After the harness's receipt was
// verified (outside any lock), the shell loads the operator path's snapshot under the run's
// advisory lock and short run, issue and coordinator row locks; this admits only when the run
// still carries exactly the owner the receipt attests (same token, same deployment) and every
// check of the operator attestation passes (decideAttestation: the hold, the lock, the receipt,
// checkRunBinding). A changed owner fails closed.
import { platformProofOf, sameIdentity, type ControllerPlatformIdentity, type RecordedPlatform } from "../../platforms/platform-identity";
import { decideAttestation, type AttestationRejectCode, type AttestationSnapshot } from "../policies/decide-attestation";

export interface HarnessTakeoverSnapshot {
  attestation: AttestationSnapshot;
  /** The platform the run's current receipt records (undefined: none, or no receipt). */
  receiptPlatform: RecordedPlatform | undefined;
  /** The deployment the verified receipt attests. */
  proven: ControllerPlatformIdentity;
}

export type HarnessTakeoverDecision =
  | { kind: "admit" }
  /** An operator attested the same owner meanwhile: nothing to write. */
  | { kind: "already_attested" }
  | { kind: "reject"; code: AttestationRejectCode; message: string };

export function decideHarnessTakeover(s: HarnessTakeoverSnapshot): HarnessTakeoverDecision {
  // This hold already released exactly this owner (another worker's pass, racing this one
  // between its harness question and its admission). That pass's finalization may carry its own
  // receipt by now: no changed owner of THIS hold, so the operator path's idempotent answer
  // applies, never a refusal that would tell Recovery details the copyback is fenced.
  const { action, request } = s.attestation;
  if (action.attestedToken !== null && action.attestedToken === request.ownerToken) return decideAttestation(s.attestation);
  const platform = platformProofOf(s.receiptPlatform);
  if (s.attestation.receipt.kind === "receipt" && (platform.kind !== "harness" || !sameIdentity(platform.identity, s.proven))) {
    return { kind: "reject", code: "owner_changed", message: "The run's owner receipt no longer names the deployment the harness proved stopped." };
  }
  return decideAttestation(s.attestation);
}
