// The owner sidecar `<hash>.lock.owner.json` (R-LK-3): who held the lock, for timeout diagnostics
// and `locks list` only. Nothing here ever decides ownership: the SQLite reserved lock alone does.
// A sidecar may be missing, stale (its writer died), forged or garbage; so it is written after
// acquisition, removed before the lock is let go, and read with a size cap and defensive parsing.
import { constants, closeSync, openSync, unlinkSync, writeSync } from "node:fs";
import { lstat, open } from "node:fs/promises";

export const OWNER_SIDECAR_MAX_BYTES = 4096;

export type OwnerStatus =
  /** No sidecar (a free lock, or a holder that has not written it yet). */
  | "absent"
  /** Well-formed JSON with a pid and a creation time. Still only a claim. */
  | "valid"
  /** Not JSON, not an object, or fields of the wrong type. */
  | "invalid"
  /** Larger than OWNER_SIDECAR_MAX_BYTES; not read. */
  | "oversized"
  /** A symlink, directory, FIFO, hard link...; not opened. */
  | "not_regular"
  | "unreadable";

export interface OwnerRecord {
  status: OwnerStatus;
  pid: number | null;
  createdAt: string | null;
  hostname: string | null;
  target: string | null;
}

export interface OwnerClaim {
  pid: number;
  createdAt: string;
  hostname?: string;
  target?: string;
}

const EMPTY = { pid: null, createdAt: null, hostname: null, target: null } as const;

/** Pure: bytes of a sidecar -> a bounded, typed record. Never throws. */
export function parseOwnerSidecar(bytes: Buffer | string): OwnerRecord {
  const size = typeof bytes === "string" ? Buffer.byteLength(bytes) : bytes.length;
  if (size > OWNER_SIDECAR_MAX_BYTES) return { status: "oversized", ...EMPTY };
  let value: unknown;
  try {
    value = JSON.parse(typeof bytes === "string" ? bytes : bytes.toString("utf8"));
  } catch {
    return { status: "invalid", ...EMPTY };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { status: "invalid", ...EMPTY };
  const raw = value as Record<string, unknown>;
  const pid = typeof raw.pid === "number" && Number.isSafeInteger(raw.pid) && raw.pid > 0 ? raw.pid : null;
  const createdAt = boundedText(raw.createdAt, 64);
  const record: OwnerRecord = {
    status: "invalid",
    pid,
    createdAt: createdAt !== null && !Number.isNaN(Date.parse(createdAt)) ? createdAt : null,
    hostname: boundedText(raw.hostname, 255),
    target: boundedText(raw.target, 4096),
  };
  if (record.pid !== null && record.createdAt !== null) record.status = "valid";
  return record;
}

/** A string field, with control characters removed and length capped; anything else -> null. */
function boundedText(value: unknown, max: number): string | null {
  if (typeof value !== "string") return null;
  // eslint-disable-next-line no-control-regex -- stripping control characters is the point
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, "");
  return clean.length === 0 ? null : clean.slice(0, max);
}

/**
 * Reads a sidecar without following a symlink, without blocking on a FIFO and without reading
 * more than the cap. A hostile file yields a status, never an exception.
 */
export async function readOwnerSidecar(file: string): Promise<OwnerRecord> {
  try {
    const st = await lstat(file);
    // A hard link is refused unopened: it could be another name of a .lock.sqlite file, and
    // opening then closing a descriptor of that inode would drop this process's POSIX locks on it.
    if (!st.isFile() || st.nlink !== 1) return { status: "not_regular", ...EMPTY };
    if (st.size > OWNER_SIDECAR_MAX_BYTES) return { status: "oversized", ...EMPTY };
    const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const fst = await handle.stat();
      if (!fst.isFile() || fst.ino !== st.ino || fst.dev !== st.dev) return { status: "not_regular", ...EMPTY };
      const buffer = Buffer.alloc(OWNER_SIDECAR_MAX_BYTES + 1);
      let length = 0;
      while (length < buffer.length) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      return parseOwnerSidecar(buffer.subarray(0, length));
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (isErrno(error, "ENOENT")) return { status: "absent", ...EMPTY };
    if (isErrno(error, "ELOOP")) return { status: "not_regular", ...EMPTY };
    return { status: "unreadable", ...EMPTY };
  }
}

/**
 * Writes the sidecar while the lock is held. Whatever sits at the path (a stale or forged file,
 * a symlink, a hard link to something else) is unlinked first and a fresh private file created
 * exclusively, so a hostile entry can never redirect or truncate another file. Best effort: a
 * sidecar that cannot be written costs diagnostics, never the lock, so this returns false.
 */
export function writeOwnerSidecar(file: string, claim: OwnerClaim): boolean {
  const body = Buffer.from(JSON.stringify(claim));
  for (let attempt = 0; attempt < 2; attempt += 1) {
    removeOwnerSidecar(file);
    let fd: number;
    try {
      fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (error) {
      if (isErrno(error, "EEXIST")) continue;
      return false;
    }
    try {
      writeSync(fd, body);
      return true;
    } catch {
      return false;
    } finally {
      closeSync(fd);
    }
  }
  return false;
}

/** Removes the sidecar entry (a symlink itself, never its target). Missing is fine. */
export function removeOwnerSidecar(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // ENOENT: nothing to remove. EISDIR/EPERM: a forged directory, left for the operator;
    // diagnostics only, so it must not fail the lock.
  }
}

export function isErrno(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}
