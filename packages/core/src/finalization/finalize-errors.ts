// What finalizeRun reads from the errors its steps throw: whether this process lost the
// copyback's ownership, whether the coordinator moved under the commit, and the publication's
// binding refusal (R-RW-4) with the reason it carries.
import { isDomainError } from "../errors";
import { FINALIZATION_OWNERSHIP_LOST } from "./finalization-owner";

/** R-RW-4: the publication's repeated binding check refused (the task moved on before any host write). */
export const PUBLICATION_UNBOUND_CODE = "finalization_binding_changed";

/** The coordinator left arbitrating while the commit's transaction ran (another writer settled it). */
export const FINALIZATION_PHASE_CHANGED = "finalization_phase_changed";

/** True when the error (or a cause it wraps) says this process no longer owns the copyback. */
export function isOwnershipLoss(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if ((current as { code?: unknown }).code === FINALIZATION_OWNERSHIP_LOST) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** True when the commit met a coordinator that had left arbitrating: the outcome is someone else's. */
export function isPhaseChange(error: unknown): boolean {
  return isDomainError(error) && error.code === FINALIZATION_PHASE_CHANGED;
}

/** The binding check's refusal code carried by a PUBLICATION_UNBOUND_CODE error, or "unknown". */
export function bindingReasonOf(error: unknown): string {
  const reason = (error as { details?: { reason?: unknown } } | null)?.details?.reason;
  return typeof reason === "string" ? reason : "unknown";
}
