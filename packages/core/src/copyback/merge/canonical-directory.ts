// What counts as an existing host directory: the path resolved with every link (realpath) names a
// directory. The merge target (merge-snapshot.ts) is this directory, and the claim of a run of an
// unbound workspace asks the same question of the workspace's host path (dispatch/claim-runs.ts).
import { lstat, realpath } from "node:fs/promises";

/** The canonical directory `dir` names, or null when it does not exist or is not a directory. */
export async function canonicalDirectoryOf(dir: string): Promise<string | null> {
  try {
    const real = await realpath(dir);
    if ((await lstat(real)).isDirectory()) return real;
  } catch {
    // missing, unreadable or not a directory: null (callers word the error, never with the path: R-UA-4)
  }
  return null;
}
