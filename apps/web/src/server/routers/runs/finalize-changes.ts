// What a `workspace_finalize` operation says it changed in the host workspace: the relative paths
// the merge wrote and deleted (operation metadata, written by the finalizer). JSON from the
// database, so it is parsed; metadata of another shape (an older or failed operation) reads as
// "no change list", never as an error on the page.
import { z } from "zod";

const paths = z.array(z.string().max(4096));

const finalizeMetadata = z.looseObject({
  written: paths.optional(),
  deleted: paths.optional(),
  unchanged: z.boolean().optional(),
  omitted: z.boolean().optional(),
});

export interface FinalizeChanges {
  written: string[];
  deleted: string[];
  /** The sandbox changed nothing. */
  unchanged: boolean;
  /** The export was unsafe and omitted (R-UA-3): nothing was copied back. */
  omitted: boolean;
}

export function finalizeChangesOf(metadata: unknown): FinalizeChanges | null {
  const parsed = finalizeMetadata.safeParse(metadata);
  if (!parsed.success) return null;
  const { written, deleted, unchanged, omitted } = parsed.data;
  if (written === undefined && deleted === undefined && unchanged === undefined && omitted === undefined) return null;
  return { written: written ?? [], deleted: deleted ?? [], unchanged: unchanged ?? false, omitted: omitted ?? false };
}
