// Pure: what a failed delta export means for the copyback try. Two kinds of failure:
//   - the sandbox or the transfer failed (a provider error, a dropped or timed-out transfer,
//     staging out of space): the full export would ask the same sandbox over the same channel, so
//     the try fails as any export does and R-RR-1 retries it before any host write;
//   - the delta itself is not usable (its manifest and archive disagree, provider_delta_mismatch;
//     an unsafe or over-limit manifest; a malformed manifest; anything unrecognised): the full
//     export runs in the same try. It has its own policy (salvage, omission, limits, R-UA-2..4),
//     which the delta never replaces, so nothing the delta refused is ever decided by the delta.
// Nothing of a delta is written to the host before the merge, so either way no host file changed.
import { classifyCopybackFailure } from "../copyback/merge/classify";
import type { Manifest } from "../copyback/manifest/types";
import { errnoOf } from "../errors";

export const DELTA_MISMATCH_CODE = "provider_delta_mismatch";

export type DeltaFailureDecision =
  /** The full export, now, in the same try. */
  | { kind: "fall_back"; code: string }
  /** The try fails with this error (retried or settled as any export failure). */
  | { kind: "fail_try" };

export function decideDeltaFailure(error: unknown): DeltaFailureDecision {
  const code = plainCodeOf(error);
  if (code === DELTA_MISMATCH_CODE) return { kind: "fall_back", code };
  const { reason } = classifyCopybackFailure(error);
  if (reason === "provider_error" || reason === "transfer_dropped" || reason === "staging_resources") return { kind: "fail_try" };
  return { kind: "fall_back", code: code ?? "delta_export_failed" };
}

/** The error's own code (a provider's, a domain error's, an errno) when it is a short plain word, fit to record as the fallback's reason. */
function plainCodeOf(error: unknown): string | undefined {
  const code = errnoOf(error);
  return code !== undefined && /^[A-Za-z0-9_.-]{1,80}$/.test(code) ? code : undefined;
}

/**
 * Whether a delta can save anything: only when the baseline holds a file the sandbox may still
 * have unchanged. Against an empty baseline every entry is changed and carried, and the delta
 * would only add the sandbox's hashing and a second verification to the one-pass full export.
 */
export function deltaCanSave(baseline: Manifest): boolean {
  return baseline.entries.some((entry) => entry.type === "file");
}
