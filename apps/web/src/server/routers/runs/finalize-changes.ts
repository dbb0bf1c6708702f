// What a `workspace_finalize` operation says it changed in the host workspace (operation metadata,
// written by the finalizer). The finalizer records the versioned `changes` document
// (@copyback/core finalization/finalize-changes.ts: sorted paths capped per list, exact counts);
// older operations have `written` and `deleted` at the top level as counts or as path lists. JSON
// from the database, so it is parsed; metadata of another shape (an older or failed operation)
// reads as "no change list", never as an error on the page.
import { z } from "zod";
import { MAX_RECORDED_PATHS, readFinalizeChanges } from "@copyback/core/finalization";

/** Paths kept per list: the counts stay exact, the page shows at most this many paths (the finalizer's cap). */
export const MAX_CHANGED_PATHS = MAX_RECORDED_PATHS;

const changed = z.union([z.array(z.string().max(4096)), z.number().int().min(0)]);

const finalizeMetadata = z.looseObject({
  written: changed.optional(),
  deleted: changed.optional(),
  unchanged: z.boolean().optional(),
  omitted: z.boolean().optional(),
});

export interface ChangeList {
  /** The first MAX_CHANGED_PATHS paths; null when the operation recorded a count only. */
  paths: string[] | null;
  total: number;
}

export interface FinalizeChanges {
  written: ChangeList;
  deleted: ChangeList;
  /** The sandbox changed nothing. */
  unchanged: boolean;
  /** The export was unsafe and omitted (R-UA-3): nothing was copied back. */
  omitted: boolean;
}

export function finalizeChangesOf(metadata: unknown): FinalizeChanges | null {
  const parsed = finalizeMetadata.safeParse(metadata);
  if (!parsed.success) return null;
  const { written, deleted, unchanged, omitted } = parsed.data;
  const record = readFinalizeChanges(metadata);
  if (record.kind === "present") {
    // The versioned record wins over the top-level counts kept beside it for older readers.
    const { value } = record;
    return {
      written: { paths: value.written, total: value.writtenCount },
      deleted: { paths: value.deleted, total: value.deletedCount },
      unchanged: unchanged ?? false,
      omitted: omitted ?? false,
    };
  }
  if (written === undefined && deleted === undefined && unchanged === undefined && omitted === undefined) return null;
  return { written: listOf(written), deleted: listOf(deleted), unchanged: unchanged ?? false, omitted: omitted ?? false };
}

function listOf(value: string[] | number | undefined): ChangeList {
  if (value === undefined) return { paths: [], total: 0 };
  if (typeof value === "number") return { paths: null, total: value };
  return { paths: value.slice(0, MAX_CHANGED_PATHS), total: value.length };
}
