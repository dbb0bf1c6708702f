// Which filesystem holds the instance root, and whether its file locking can be trusted.
// The lock protocol is SQLite's POSIX record locking; on network filesystems those locks are
// emulated, advisory per client, or silently dropped, so two hosts (or one host and a stale
// client cache) could both believe they hold a target. Such filesystems are refused at startup.
//
// Detection reads /proc/self/mountinfo (Linux). Where that file does not exist the type is
// unknown and the check passes: it is a guard against a known-bad setup, not a proof of a good one.
import { readFile, realpath } from "node:fs/promises";
import path from "node:path";
import { UnsupportedLockFilesystemError } from "./errors";
import { isErrno } from "./owner-sidecar";

export interface MountEntry {
  mountId: number;
  parentId: number;
  /** Path inside the filesystem that is mounted (bind mounts: not "/"). */
  root: string;
  mountPoint: string;
  fsType: string;
  source: string;
}

/** Undoes the kernel's octal escapes (\040 space, \011 tab, \012 newline, \134 backslash). */
export function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/**
 * Pure: parses mountinfo text. A line is
 *   `36 35 98:0 /root /mount/point rw,opts [optional fields...] - fstype source super,opts`
 * Malformed lines are skipped (a guard must not crash on a kernel it does not know).
 */
export function parseMountInfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split("\n")) {
    const fields = line.trim().split(" ");
    const separator = fields.indexOf("-", 6);
    if (fields.length < 6 || separator < 0 || separator + 2 >= fields.length) continue;
    const mountId = Number(fields[0]);
    const parentId = Number(fields[1]);
    const root = fields[3];
    const mountPoint = fields[4];
    const fsType = fields[separator + 1];
    const source = fields[separator + 2];
    if (!Number.isInteger(mountId) || !Number.isInteger(parentId) || !root || !mountPoint?.startsWith("/") || !fsType || source === undefined) continue;
    entries.push({ mountId, parentId, root: unescapeMountField(root), mountPoint: unescapeMountField(mountPoint), fsType: unescapeMountField(fsType), source: unescapeMountField(source) });
  }
  return entries;
}

function covers(mountPoint: string, target: string): boolean {
  return mountPoint === "/" || target === mountPoint || target.startsWith(`${mountPoint}/`);
}

/**
 * Pure: the mount that holds `realPath` (an absolute, symlink-free path): the longest mount
 * point that is a prefix of it. Mounts stacked on one mount point are told apart by parentage
 * (the upper one's parent is the lower one), otherwise the later line wins. A mount hidden by a
 * later mount over one of its ancestors is not detected (rare; documented limitation).
 */
export function findMountFor(entries: readonly MountEntry[], realPath: string): MountEntry | null {
  let best: MountEntry | null = null;
  for (const entry of entries) {
    if (!covers(entry.mountPoint, realPath)) continue;
    if (best === null || entry.mountPoint.length > best.mountPoint.length) {
      best = entry;
    } else if (entry.mountPoint === best.mountPoint && best.parentId !== entry.mountId) {
      best = entry; // same mount point: take the upper one (not the parent of the current best)
    }
  }
  return best;
}

/** Filesystem types whose POSIX locks SQLite cannot rely on (network or host-shared). */
const UNTRUSTED_FS_TYPES = new Set([
  "nfs", "nfs4", "cifs", "smb3", "smbfs", "smb", "ncpfs", "ncp", "9p", "ceph", "glusterfs", "lustre", "afs",
  "openafs", "coda", "gpfs", "beegfs", "orangefs", "pvfs2", "vboxsf", "vmhgfs", "davfs", "sshfs",
]);

/** FUSE subtypes (`fuse.<subtype>`) that reach a remote store. */
const UNTRUSTED_FUSE_SUBTYPES = new Set([
  "sshfs", "s3fs", "gcsfuse", "rclone", "glusterfs", "ceph-fuse", "cephfs", "juicefs", "mfs", "lizardfs",
  "goofys", "blobfuse", "blobfuse2", "davfs", "davfs2", "smbnetfs", "curlftpfs", "s3ql", "vmhgfs-fuse",
  "objectivefs", "seaweedfs", "gvfsd-fuse", "afpfs", "fuse-nfs", "mountpoint-s3", "geesefs", "weka",
]);

/** Pure policy: null when locking can be trusted, else why not. */
export function untrustedLockingReason(fsType: string): string | null {
  const type = fsType.toLowerCase();
  if (UNTRUSTED_FS_TYPES.has(type)) return `${fsType} is a network or host-shared filesystem`;
  const [base, subtype] = type.split(".", 2);
  if ((base === "fuse" || base === "fuseblk") && subtype !== undefined && UNTRUSTED_FUSE_SUBTYPES.has(subtype)) {
    return `${fsType} is a FUSE filesystem backed by a remote store`;
  }
  return null;
}

export interface FilesystemInfo {
  fsType: string;
  mountPoint: string;
  source: string;
  /** false: file locking on it cannot be trusted. */
  lockable: boolean;
  reason: string | null;
}

/** Realpath of `p`, or of its nearest existing ancestor with the rest appended. */
async function resolveExisting(p: string): Promise<string> {
  let current = path.resolve(p);
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(await realpath(current), ...rest.reverse());
    } catch (error) {
      const parent = path.dirname(current);
      if (!isErrno(error, "ENOENT") || parent === current) throw error;
      rest.push(path.basename(current));
      current = parent;
    }
  }
}

/** The filesystem holding `p`; null where /proc/self/mountinfo is unavailable. */
export async function detectFilesystemType(p: string, mountInfoFile = "/proc/self/mountinfo"): Promise<FilesystemInfo | null> {
  let text: string;
  try {
    text = await readFile(mountInfoFile, "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT") || isErrno(error, "EACCES")) return null;
    throw error;
  }
  const mount = findMountFor(parseMountInfo(text), await resolveExisting(p));
  if (!mount) return null;
  const reason = untrustedLockingReason(mount.fsType);
  return { fsType: mount.fsType, mountPoint: mount.mountPoint, source: mount.source, lockable: reason === null, reason };
}

/**
 * Startup check: refuses an instance root (or any lock path) on a filesystem whose locking
 * cannot be trusted, with code `unsupported_lock_filesystem`.
 */
export async function assertLockableFilesystem(p: string, mountInfoFile?: string): Promise<FilesystemInfo | null> {
  const info = await detectFilesystemType(p, mountInfoFile);
  if (info && !info.lockable) {
    throw new UnsupportedLockFilesystemError(
      `The instance root is on a ${info.fsType} filesystem (${info.reason}); its file locking cannot be trusted, so directory-merge locks cannot keep two writers apart. Move the instance root to a local disk (ext4, xfs, btrfs, tmpfs, ...).`,
      { fsType: info.fsType, mountPoint: info.mountPoint, path: p },
    );
  }
  return info;
}
