// The files a copyback wrote and deleted in the host workspace, kept under `changes` in the
// metadata of its succeeded `workspace_finalize` operation so the run page can name them. Paths
// are the merge's relative paths (never a host path, R-UA-4), sorted, and capped per list: the
// counts stay exact and `truncated` says that a list was cut. Versioned, because the metadata is
// JSON read back by other code (apps/web) that must tell this shape from older ones.
import { z } from "zod";

export const FINALIZE_CHANGES_SCHEMA = "copyback.workspace-finalize-changes.v1";

/** Paths kept per list (written, deleted); a run that changes more records the first ones and the counts. */
export const MAX_RECORDED_PATHS = 500;

/** The metadata key of the document. */
export const FINALIZE_CHANGES_KEY = "changes";

const pathList = z.array(z.string().min(1)).max(MAX_RECORDED_PATHS);
const count = z.number().int().min(0);

export const finalizeChangesSchema = z
  .strictObject({
    schema: z.literal(FINALIZE_CHANGES_SCHEMA),
    written: pathList,
    deleted: pathList,
    writtenCount: count,
    deletedCount: count,
    truncated: z.boolean(),
  })
  .refine((doc) => doc.writtenCount >= doc.written.length && doc.deletedCount >= doc.deleted.length, "a count is below its list's length")
  .refine(
    (doc) => doc.truncated === (doc.writtenCount > doc.written.length || doc.deletedCount > doc.deleted.length),
    "truncated does not match the counts",
  );

export type FinalizeChangesRecord = z.infer<typeof finalizeChangesSchema>;

/** Pure: the record of a merge's written and deleted paths (sorted by code unit, then capped). */
export function recordFinalizeChanges(written: readonly string[], deleted: readonly string[]): FinalizeChangesRecord {
  const firstSorted = (paths: readonly string[]) => [...paths].sort().slice(0, MAX_RECORDED_PATHS);
  return {
    schema: FINALIZE_CHANGES_SCHEMA,
    written: firstSorted(written),
    deleted: firstSorted(deleted),
    writtenCount: written.length,
    deletedCount: deleted.length,
    truncated: written.length > MAX_RECORDED_PATHS || deleted.length > MAX_RECORDED_PATHS,
  };
}

export type FinalizeChangesRead = { kind: "present"; value: FinalizeChangesRecord } | { kind: "absent" } | { kind: "invalid"; message: string };

/** Reads the record from an operation's metadata; an older operation without one is `absent`. */
export function readFinalizeChanges(metadata: unknown): FinalizeChangesRead {
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) return { kind: "invalid", message: "metadata is not a JSON object" };
  const raw = (metadata as Record<string, unknown>)[FINALIZE_CHANGES_KEY];
  if (raw === undefined || raw === null) return { kind: "absent" };
  const parsed = finalizeChangesSchema.safeParse(raw);
  return parsed.success ? { kind: "present", value: parsed.data } : { kind: "invalid", message: z.prettifyError(parsed.error) };
}
