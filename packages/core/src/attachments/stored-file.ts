// Where an attachment's bytes live and how they are opened: the one place both the attachment
// service and the reconstruction's hashes (R-RC-3) read the store. `storage_path` is relative to
// the instance root (COPYBACK_HOME); a path that leaves the root, a link anywhere on the way out
// of it, or anything but a regular file is not an attachment's bytes.
import { constants } from "node:fs";
import { open, realpath, type FileHandle } from "node:fs/promises";
import path from "node:path";

/** The store's folder (under the instance root) that holds a company's attachments. */
export const ATTACHMENTS_DIR = "attachments";

export function attachmentPath(instanceRoot: string, storagePath: string): string | null {
  const root = path.resolve(instanceRoot);
  const full = path.resolve(root, storagePath);
  return full.startsWith(root + path.sep) ? full : null;
}

/**
 * The stored file opened read-only, or null when it is missing, outside the root, reached through
 * a link or not a regular file. The caller closes the handle.
 */
export async function openStoredAttachment(instanceRoot: string, storagePath: string): Promise<{ handle: FileHandle; sizeBytes: number } | null> {
  const full = attachmentPath(instanceRoot, storagePath);
  if (!full) return null;
  try {
    // A link anywhere on the way may not lead out of the store: the real path must stay inside
    // the real instance root, and the file itself is opened without following a link.
    const [realRoot, realFile] = await Promise.all([realpath(instanceRoot), realpath(full)]);
    if (!realFile.startsWith(realRoot + path.sep)) return null;
    const handle = await open(full, constants.O_RDONLY | constants.O_NOFOLLOW);
    const stat = await handle.stat();
    if (!stat.isFile()) {
      await handle.close();
      return null;
    }
    return { handle, sizeBytes: stat.size };
  } catch {
    return null;
  }
}
