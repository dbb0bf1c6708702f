// The merge metrics' byte counts: the snapshot's file bytes, and those of the files a
// merge wrote into the host. Pure.
import { isValidatedManifest } from "../manifest/parse";
import { comparePaths } from "../manifest/paths";
import type { Manifest } from "../manifest/types";
import type { MergeOutcome } from "./types";

export function mergeBytes(manifest: Manifest | undefined, outcome: MergeOutcome): { writtenBytes?: number; snapshotBytes?: number } {
  if (!manifest) return {};
  const written = outcome.kind === "applied" ? outcome.written : [];
  const isWritten = writtenLookup(manifest, written);
  let snapshotBytes = 0;
  let writtenBytes = 0;
  for (const entry of manifest.entries) {
    if (entry.type !== "file") continue;
    const size = entry.size ?? 0;
    snapshotBytes += size;
    if (isWritten(entry.path)) writtenBytes += size;
  }
  return { writtenBytes, snapshotBytes };
}

/**
 * Whether a manifest path was written, asked in the manifest's order. A sealed manifest and the
 * plan's written paths are both in path order, so one pass over both answers it without a set of
 * 200,000 paths at the end of a large merge; any other manifest gets the set.
 */
function writtenLookup(manifest: Manifest, written: readonly string[]): (path: string) => boolean {
  if (!isValidatedManifest(manifest)) {
    const set = new Set(written);
    return (path) => set.has(path);
  }
  let next = 0;
  return (path) => {
    while (next < written.length && comparePaths(written[next] as string, path) < 0) next += 1;
    return next < written.length && written[next] === path;
  };
}
