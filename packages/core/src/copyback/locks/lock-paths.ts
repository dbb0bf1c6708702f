// Where a target's lock lives (R-LK-1): `<instanceRoot>/locks/directory-merge/<hash>.*`, with
// <hash> the sha256 of the target's canonical path, so every writer of one directory meets on
// one file, whatever spelling of the path it was given.
import { createHash } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, realpathSync, statSync, type Stats } from "node:fs";
import path from "node:path";
import { LockPathError } from "./errors";
import { isErrno } from "./owner-sidecar";

export const LOCK_ROOT_RELATIVE = path.join("locks", "directory-merge");

/** The files of one target's lock, all inside the lock root. */
export interface LockFiles {
  hash: string;
  /** Permanent SQLite file whose reserved lock is the lock (R-LK-2, R-LK-4). */
  lockFile: string;
  /** Diagnostics only (R-LK-3). */
  ownerFile: string;
  /** Waiter tickets for fairness; never part of ownership. */
  queueFile: string;
  /** A directory left by the old protocol; blocks admission (R-LK-5). */
  legacyDir: string;
}

export function lockFilesFor(lockRoot: string, hash: string): LockFiles {
  return {
    hash,
    lockFile: path.join(lockRoot, `${hash}.lock.sqlite`),
    ownerFile: path.join(lockRoot, `${hash}.lock.owner.json`),
    queueFile: path.join(lockRoot, `${hash}.queue.sqlite`),
    legacyDir: path.join(lockRoot, `${hash}.lock`),
  };
}

/** Names relative to the instance root, for messages that must not carry host paths (R-UA-4). */
export function relativeLockName(hash: string, suffix: ".lock.sqlite" | ".lock/" | ".lock.owner.json"): string {
  return `${LOCK_ROOT_RELATIVE}/${hash}${suffix}`;
}

export function hashTarget(canonicalTarget: string): string {
  return createHash("sha256").update(canonicalTarget, "utf8").digest("hex");
}

/**
 * The canonical form of a merge target (R-LK-1): its realpath. A target that does not exist
 * yet (a first restore creates it) is its nearest existing ancestor's realpath with the missing
 * components appended, which is what realpath will return once the merge creates them, so
 * writers before and after the creation use the same lock. A dangling symlink on the way is
 * refused: where it will point once it resolves is unknown, so no stable name exists for it.
 * Synchronous system calls (microseconds each): on a busy machine every trip through the
 * thread pool can wait a scheduler slice, which is what made the lock's p99 slow.
 */
export async function canonicalTarget(target: string): Promise<string> {
  return canonicalTargetSync(target);
}

export function canonicalTargetSync(target: string): string {
  let existing = path.resolve(target);
  const missing: string[] = [];
  for (;;) {
    try {
      const real = realpathSync.native(existing);
      if (missing.length === 0 && !statSync(real).isDirectory()) {
        throw new LockPathError("target_not_directory", "A directory-merge target must be a directory.");
      }
      return missing.length === 0 ? real : path.join(real, ...missing.reverse());
    } catch (error) {
      if (isErrno(error, "ENOTDIR")) throw new LockPathError("target_not_directory", "A component of the directory-merge target is not a directory.");
      if (!isErrno(error, "ENOENT")) throw error;
    }
    let entry: Stats | null;
    try {
      entry = lstatSync(existing);
    } catch (error) {
      if (!isErrno(error, "ENOENT")) throw error;
      entry = null;
    }
    if (entry?.isSymbolicLink()) {
      throw new LockPathError("target_dangling_symlink", "The directory-merge target passes through a dangling symlink.");
    }
    const parent = path.dirname(existing);
    if (parent === existing) throw new LockPathError("target_not_directory", "No ancestor of the directory-merge target exists.");
    missing.push(path.basename(existing));
    existing = parent;
  }
}

/**
 * Creates `locks/` and `locks/directory-merge/` private (0700) and checks, every time, that
 * neither is a symlink (which could move every lock file somewhere else), a non-directory, or
 * writable by group or others (who could then swap lock files). Returns the lock root's realpath.
 * Synchronous metadata calls on purpose: microseconds each, on every acquire.
 */
export function ensureLockRoot(instanceRoot: string): string {
  const root = path.resolve(instanceRoot);
  let dir = root;
  for (const segment of LOCK_ROOT_RELATIVE.split(path.sep)) {
    dir = path.join(dir, segment);
    try {
      assertPrivateDirectory(dir);
    } catch (error) {
      if (!isErrno(error, "ENOENT")) throw error;
      mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 });
      try {
        mkdirSync(dir, { mode: 0o700 });
        chmodSync(dir, 0o700); // mkdir's mode is filtered by the umask
      } catch (mkdirError) {
        if (!isErrno(mkdirError, "EEXIST")) throw mkdirError;
      }
      assertPrivateDirectory(dir);
    }
  }
  return realpathSync.native(dir);
}

/** Throws unless `dir` is a real directory (not a symlink) without group/other write access. */
export function assertPrivateDirectory(dir: string): void {
  const name = path.basename(dir);
  const st = lstatSync(dir);
  if (st.isSymbolicLink()) {
    throw new LockPathError("lock_root_symlink", `The lock directory ${name}/ is a symlink; lock files must live in a real directory of the instance root.`, { path: dir });
  }
  if (!st.isDirectory()) {
    throw new LockPathError("lock_root_not_directory", `The lock directory ${name}/ is not a directory.`, { path: dir });
  }
  if ((st.mode & 0o022) !== 0) {
    throw new LockPathError("lock_root_insecure", `The lock directory ${name}/ is writable by group or others; make it private (chmod 700).`, { path: dir, mode: st.mode & 0o777 });
  }
}

/**
 * R-LK-1: the lock files live outside the writable target. A target that is, contains or lies
 * inside the lock root could have a merge delete or replace lock files (R-LK-4).
 */
export function assertTargetOutsideLockRoot(canonical: string, lockRootReal: string): void {
  if (isWithin(canonical, lockRootReal) || isWithin(lockRootReal, canonical)) {
    throw new LockPathError("target_overlaps_lock_root", "A directory-merge target may not contain, or lie inside, the instance's lock directory.");
  }
}

function isWithin(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}
