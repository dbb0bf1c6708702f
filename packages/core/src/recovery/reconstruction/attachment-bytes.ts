// R-RC-3: the sha256 of an attachment's stored bytes, read where the attachment store keeps them
// (issue_attachments.storage_path, relative to the instance root). Computed from the bytes, not
// copied from the row: the intent records what the agent will be able to verify (R-RC-5). A
// path that leaves the instance root, or a file that cannot be read, has no hash (null): the
// admission refuses it as unavailable.
import { createHash } from "node:crypto";
import { openStoredAttachment } from "../../attachments/stored-file";

export interface StoredBytes {
  sha256: string;
  sizeBytes: number;
}

export async function hashStoredAttachment(instanceRoot: string, storagePath: string): Promise<StoredBytes | null> {
  const opened = await openStoredAttachment(instanceRoot, storagePath);
  if (!opened) return null;
  const hash = createHash("sha256");
  let size = 0;
  try {
    for await (const chunk of opened.handle.createReadStream({ autoClose: false })) {
      const bytes = chunk as Buffer;
      size += bytes.length;
      hash.update(bytes);
    }
  } catch {
    return null;
  } finally {
    await opened.handle.close();
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
