// The parts of heartbeat_runs' JSON columns that runs and finalization read. Both columns are
// shared with other writers (the finalization owner receipt lives in runner_profile_json, the
// maintenance SQL edits it), so every writer merges with `||` and every reader parses only its
// own key with zod: unknown or malformed JSON never grants anything.
import { z } from "zod";

/** runner_profile_json.nativeClaim: what the task looked like when this run claimed it. */
export const NATIVE_CLAIM_KEY = "nativeClaim";

export const nativeClaimRecord = z.object({
  issueId: z.uuid(),
  /** The issue's status_version right after the claim moved it to in_progress. */
  statusVersion: z.number().int().min(0),
  claimedAt: z.string(),
});
export type NativeClaimRecord = z.infer<typeof nativeClaimRecord>;

/** The claim record of a run, or null when absent or malformed (then nothing is owned). */
export function readNativeClaim(runnerProfileJson: unknown): NativeClaimRecord | null {
  const holder = z.object({ [NATIVE_CLAIM_KEY]: nativeClaimRecord }).safeParse(runnerProfileJson);
  return holder.success ? holder.data[NATIVE_CLAIM_KEY] : null;
}
