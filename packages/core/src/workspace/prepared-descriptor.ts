// The prepared workspace descriptor: what the dispatcher recorded when it seeded a sandbox from
// the host workspace. It lives in the `workspace_prepare` operation's metadata and carries the
// merge baseline (the host manifest taken under the directory-merge lock in the same view that
// seeded the sandbox).
//
// R-FO-2: a prepared workspace reference is NEVER an export receipt. Nothing here proves that a
// sandbox's files reached the host; only the success barrier (records/copyback-proven.ts)
// does. The descriptor is an input of finalization, never a shortcut around it.
import { z } from "zod";
import { parseManifest } from "../copyback/manifest/parse";
import type { Manifest } from "../copyback/manifest/types";

export const PREPARED_WORKSPACE_SCHEMA = "copyback.prepared-workspace.v1";

/** A stored manifest, validated by the engine's own parser (a merge trusts it to decide deletions). */
const storedManifest = z.unknown().transform((value, ctx): Manifest => {
  try {
    return parseManifest(value);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: error instanceof Error ? error.message : "invalid manifest" });
    return z.NEVER;
  }
});

export const sandboxIdentitySchema = z.object({
  providerLeaseId: z.string().min(1),
  fingerprint: z.string(),
});

export const preparedWorkspaceDescriptor = z.object({
  schema: z.literal(PREPARED_WORKSPACE_SCHEMA),
  executionWorkspaceId: z.uuid(),
  /** The canonical (realpath) host directory, the directory-merge lock target. */
  hostPath: z.string().startsWith("/"),
  /** execution_workspaces.excluded_paths at preparation time: left out of seed, manifest and merge. */
  excludedPaths: z.array(z.string()),
  baseline: storedManifest,
  leaseId: z.uuid(),
  /** The allocation that was seeded; a sandbox with another identity is not this one. */
  seed: sandboxIdentitySchema,
  preparedAt: z.iso.datetime({ offset: true }),
});

export type PreparedWorkspaceDescriptor = z.infer<typeof preparedWorkspaceDescriptor>;

/** Counts of a manifest, for run events and the console. */
export function manifestCounts(manifest: Manifest): { files: number; directories: number; symlinks: number; bytes: number } {
  const counts = { files: 0, directories: 0, symlinks: 0, bytes: 0 };
  for (const entry of manifest.entries) {
    if (entry.type === "file") {
      counts.files++;
      counts.bytes += entry.size ?? 0;
    } else if (entry.type === "directory") counts.directories++;
    else counts.symlinks++;
  }
  return counts;
}
