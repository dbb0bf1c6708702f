// Private staging directories for finalization: `<instanceRoot>/staging/<runId>-<n>` (n: the
// run's staging sequence, finalize-run.ts stagingSequence), 0700, holding the exported archive and
// the extracted snapshot of one attempt. The snapshot is consumed by the merge (files are renamed
// into the host when on the same filesystem) and what is left is removed in all cases.
import { lstat, mkdir, rmdir } from "node:fs/promises";
import { join } from "node:path";
import { emptyDirectory } from "../copyback/archive/extract";
import { DomainError } from "../errors";

export const STAGING_ROOT_RELATIVE = "staging";

export async function createStagingDir(instanceRoot: string, name: string): Promise<string> {
  if (!/^[A-Za-z0-9_.-]+$/.test(name) || name === "." || name === "..") {
    throw new DomainError("invalid", "staging_name_invalid", "A staging directory name must be a plain name.");
  }
  const root = join(instanceRoot, STAGING_ROOT_RELATIVE);
  await mkdir(root, { recursive: true, mode: 0o700 });
  const rootStats = await lstat(root);
  if (rootStats.isSymbolicLink() || !rootStats.isDirectory()) {
    throw new DomainError("unavailable", "staging_root_invalid", "The instance's staging directory is not a plain directory.");
  }
  const dir = join(root, name);
  // A crashed earlier attempt may have left its directory behind.
  await removeStagingDir(dir);
  await mkdir(dir, { mode: 0o700 });
  return dir;
}

/** Removes a staging directory and everything below it (never following a link); absent is fine. */
export async function removeStagingDir(dir: string): Promise<void> {
  try {
    const stats = await lstat(dir);
    if (!stats.isDirectory()) throw new DomainError("unavailable", "staging_root_invalid", "A staging entry is not a directory.");
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return;
    throw error;
  }
  await emptyDirectory(dir);
  await rmdir(dir);
}
