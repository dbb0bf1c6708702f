// Legacy directory locks (R-LK-5). Older versions took a target by creating `<hash>.lock/` with
// an owner.json and judged it stale when the recorded PID was gone. A restart can reuse that PID,
// and a PID says nothing about namespaces or lifetimes, so the new protocol never guesses: while
// anything exists at that name, admission is refused, whatever PID or age it claims. An old
// process does not take part in the SQLite protocol, so only an operator, after stopping every
// old writer, may clear it (the steps below, from the spec's "Upgrade from directory locks").
import { lstatSync } from "node:fs";
import { isErrno } from "./owner-sidecar";

export const LEGACY_UPGRADE_STEPS =
  "A legacy lock directory is never judged dead by its PID or age. To upgrade: " +
  "(1) drain and stop ALL old server and worker processes that can write to this instance root, including those on other hosts or in other containers; " +
  "(2) preserve any unfinished-run evidence, then move the leftover <hash>.lock/ directories out of locks/directory-merge/ to an operator scratch directory outside the lock root (never remove .lock.sqlite files); " +
  "(3) start all writers on the new version and verify that a run completes both the provider turn and file collection/restore.";

/** Anything at the legacy name (directory, file, symlink) blocks: its nature is not trusted either. */
export function legacyLockPresent(legacyDir: string): boolean {
  try {
    lstatSync(legacyDir);
    return true;
  } catch (error) {
    if (isErrno(error, "ENOENT")) return false;
    throw error;
  }
}
