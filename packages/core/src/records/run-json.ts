// The parts of heartbeat_runs' JSON columns that runs and finalization read. Both columns are
// shared with other writers (the finalization owner receipt lives in runner_profile_json, the
// maintenance SQL edits it), so every writer merges with `||` and every reader parses only its
// own key with zod: unknown or malformed JSON never grants anything.
import { Prisma } from "@copyback/db/client";
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

/**
 * SQL for `column || patch` that also survives a column holding JSON null or a non-object (it
 * starts from `{}` then): how every writer of these shared columns sets only its own keys.
 * `patch` must evaluate to a jsonb object.
 */
export function mergedJsonObject(column: "result_json" | "runner_profile_json", patch: Prisma.Sql): Prisma.Sql {
  const name = Prisma.raw(column);
  return Prisma.sql`(CASE WHEN jsonb_typeof(${name}) = 'object' THEN ${name} ELSE '{}'::jsonb END) || ${patch}`;
}
