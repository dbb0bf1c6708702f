// R-ATT-3: admission of an operator's stop attestation, pure. The shell (operator/
// attest-owner-stop.ts) loads the snapshot inside one transaction that holds the run's advisory
// lock and short row locks, and writes the admitted outcome in that same transaction.
import type { FinalizationPhase } from "@copyback/db/client";
import type { ProcessLiveness } from "../../process/process-identity";
import { checkRunBinding, type BindingRejectCode, type BindingSnapshot } from "../../finalization/binding";
import { OWNER_UNVERIFIED_CAUSE } from "../../records/causes";
import { isOpenRecoveryActionStatus } from "../../records/actions/open-statuses";

/** R-ATT-3: saved-result copyback may resume from these phases; the retry schedule stays as it is. */
export const ATTESTABLE_PHASES: readonly FinalizationPhase[] = ["result_accepted", "workspace_finalizing", "retryable_failure"];

export interface AttestationSnapshot {
  request: { runId: string; ownerToken: string };
  /**
   * `attestationToken`: what the hold asks the attestation to name (actions.ts attestationTokenOf:
   * the receipt's token, or a malformed receipt's fixed reference); `receiptSha256`: the malformed
   * receipt the hold names, null for a well-formed one.
   */
  action: { cause: string; status: string; runId: string | null; attestationToken: string | null; receiptSha256: string | null; attestedToken: string | null };
  /** pg_try_advisory_xact_lock on the run's finalization key succeeded in this transaction. */
  lockAcquired: boolean;
  /** The run's current receipt: its token, or none, or malformed (with its stored sha256). */
  receipt: { kind: "none" } | { kind: "malformed"; sha256: string } | { kind: "receipt"; token: string };
  /** Probe of the receipt's controller; null without a readable receipt. */
  liveness: ProcessLiveness | null;
  binding: BindingSnapshot;
}

export type AttestationRejectCode =
  | "action_not_owner_unverified"
  | "action_not_open"
  | "run_mismatch"
  | "copyback_lock_active"
  | "owner_changed"
  | "owner_receipt_malformed"
  | "controller_alive"
  | BindingRejectCode;

export type AttestationDecision =
  | { kind: "admit" }
  /** The same attestation was already recorded and its receipt released: nothing to write. */
  | { kind: "already_attested" }
  | { kind: "reject"; code: AttestationRejectCode; message: string };

export function decideAttestation(s: AttestationSnapshot): AttestationDecision {
  const reject = (code: AttestationRejectCode, message: string): AttestationDecision => ({ kind: "reject", code, message });
  const { action, request } = s;
  if (action.cause !== OWNER_UNVERIFIED_CAUSE) return reject("action_not_owner_unverified", "This recovery action is not an unverified copyback owner hold.");
  if (action.runId !== request.runId) return reject("run_mismatch", "The recovery action belongs to another run.");
  if (action.attestationToken === null) {
    return reject("owner_receipt_malformed", "This hold names no receipt an attestation could release (it predates receipt hashes); the reconciler's next pass replaces it with one that does.");
  }
  if (action.attestationToken !== request.ownerToken) return reject("owner_changed", "The owner token is not the one this recovery action holds.");
  if (!isOpenRecoveryActionStatus(action.status)) return reject("action_not_open", `The recovery action is ${action.status}.`);
  // Idempotent repeat: this action's attestation already released exactly this token. Nothing is
  // written, so this answer can never release a newer owner, whatever the reconciler is doing now.
  if (action.attestedToken === request.ownerToken) return { kind: "already_attested" };
  // A copyback in progress holds the lock (its connection may be gone while its tar children live
  // on, so a free lock alone admits nothing: the checks below still apply).
  if (!s.lockAcquired) return reject("copyback_lock_active", "A copyback of this run holds its finalization lock right now.");
  if (s.receipt.kind === "none") return reject("owner_changed", "The run no longer carries that owner receipt.");
  if (action.receiptSha256 !== null) {
    // A malformed receipt's hold releases exactly the receipt it names (its stored
    // bytes), never another malformed one and never a well-formed newer owner. Nothing can be
    // probed about its controller: the operator's attestation is the whole evidence.
    if (s.receipt.kind !== "malformed" || s.receipt.sha256 !== action.receiptSha256) {
      return reject("owner_changed", "The run no longer carries the malformed owner receipt this recovery action names.");
    }
  } else {
    if (s.receipt.kind === "malformed") return reject("owner_receipt_malformed", "The run's owner receipt cannot be read; inspect the run before attesting.");
    // Never release a newer owner (R-ATT-3).
    if (s.receipt.token !== request.ownerToken) return reject("owner_changed", "The run carries a newer owner receipt.");
  }
  if (s.liveness?.kind === "alive") return reject("controller_alive", "The recorded controller is still running on this host.");
  const binding = checkRunBinding(s.binding, ATTESTABLE_PHASES);
  if (binding.kind === "reject") return reject(binding.code, binding.message);
  return { kind: "admit" };
}
