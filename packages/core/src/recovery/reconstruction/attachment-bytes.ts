// R-RC-3: the sha256 of an attachment's stored bytes, read where the attachment store keeps them
// (issue_attachments.storage_path, relative to the instance root). Computed from the bytes, not
// copied from the row: the intent records what the agent will be able to verify (R-RC-5). A
// path that leaves the instance root, or a file that cannot be read, has no hash (null): the
// admission refuses it as unavailable.
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { open, realpath } from "node:fs/promises";
import path from "node:path";

export interface StoredBytes {
  sha256: string;
  sizeBytes: number;
}

export function attachmentPath(instanceRoot: string, storagePath: string): string | null {
  const root = path.resolve(instanceRoot);
  const full = path.resolve(root, storagePath);
  return full.startsWith(root + path.sep) ? full : null;
}

export async function hashStoredAttachment(instanceRoot: string, storagePath: string): Promise<StoredBytes | null> {
  const full = attachmentPath(instanceRoot, storagePath);
  if (!full) return null;
  const hash = createHash("sha256");
  let size = 0;
  try {
    // A link anywhere on the way may not lead out of the store: the real path must stay inside
    // the real instance root, and the file itself is opened without following a link.
    const [realRoot, realFile] = await Promise.all([realpath(instanceRoot), realpath(full)]);
    if (!realFile.startsWith(realRoot + path.sep)) return null;
    const handle = await open(full, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      if (!(await handle.stat()).isFile()) return null;
      for await (const chunk of handle.createReadStream({ autoClose: false })) {
        const bytes = chunk as Buffer;
        size += bytes.length;
        hash.update(bytes);
      }
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
  return { sha256: hash.digest("hex"), sizeBytes: size };
}

/** The stored bytes of the given rows (only the caller's company and task are read), by id. */
export async function hashStoredAttachments(
  instanceRoot: string,
  rows: readonly { id: string; storagePath: string }[],
): Promise<Map<string, StoredBytes | null>> {
  const out = new Map<string, StoredBytes | null>();
  for (const row of rows) out.set(row.id, await hashStoredAttachment(instanceRoot, row.storagePath));
  return out;
}
