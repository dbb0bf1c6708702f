// Adding an attachment to a task: the bytes are streamed into the instance's store while their
// sha256 and size are computed, then the row is written. The row's sha256 is what the console
// shows; what a reconstruction records (R-RC-3) is hashed again from the stored bytes.
//
// Invariant: a failure leaves neither a row nor a file. The bytes go to a temporary file in the
// company's folder (created exclusively, never through a link), are fsynced, and are linked to
// their final name `<attachmentId>` (link() refuses an existing name, unlike rename()); the row
// is inserted last, and if that fails the file is removed again.
import { createHash, randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { link, lstat, mkdir, open, realpath, unlink } from "node:fs/promises";
import path from "node:path";
import type { PrismaClient } from "@copyback/db/client";
import { DomainError } from "../errors";
import { recordActivity, type Actor } from "../records/record-activity";
import { decideAttachmentFileName } from "./file-name";
import { DEFAULT_MAX_ATTACHMENT_BYTES } from "./limits";
import type { AttachmentSummary } from "./read-attachment";
import { ATTACHMENTS_DIR } from "./stored-file";

export { DEFAULT_MAX_ATTACHMENT_BYTES };

export interface StoreAttachmentInput {
  companyId: string;
  issueId: string;
  fileName: string | null | undefined;
  contentType: string | null | undefined;
  bytes: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  uploadedByUserId: string | null;
  /** Who attached it, for the activity row written with the attachment's row. */
  actor: Actor;
  maxBytes?: number;
}

/** What an upload answers: the same summary the listing gives. */
export type StoredAttachment = AttachmentSummary;

export function attachmentTooLarge(maxBytes: number): DomainError {
  return new DomainError("too_large", "attachment_too_large", `The file is larger than ${formatMiB(maxBytes)}; attach a smaller file.`, { maxBytes });
}

export async function storeAttachment(db: PrismaClient, instanceRoot: string, input: StoreAttachmentInput): Promise<StoredAttachment> {
  const name = decideAttachmentFileName(input.fileName);
  if (name.kind === "reject") throw new DomainError("invalid", name.code, name.message);
  const contentType = normalizeContentType(input.contentType);
  const maxBytes = input.maxBytes ?? DEFAULT_MAX_ATTACHMENT_BYTES;

  // Company scoping: another company's task reads as missing.
  const issue = await db.issue.findFirst({ where: { id: input.issueId, companyId: input.companyId }, select: { id: true } });
  if (!issue) throw new DomainError("not_found", "not_found", "Task was not found.");

  const dir = await companyFolder(instanceRoot, input.companyId);
  const id = randomUUID();
  const temp = path.join(dir, `.upload-${id}`);
  const final = path.join(dir, id);
  const hash = createHash("sha256");
  let size = 0;
  let linked = false;
  try {
    const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      for await (const chunk of input.bytes) {
        size += chunk.byteLength;
        if (size > maxBytes) throw attachmentTooLarge(maxBytes);
        hash.update(chunk);
        await handle.write(chunk);
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temp, final);
    linked = true;
    await unlink(temp);
    await syncDirectory(dir);
    const sha256 = hash.digest("hex");
    // The row and its activity entry commit together; the entry also announces the task's change
    // (the live feed and the local render cache drop the task's page on it).
    const row = await db.$transaction(async (tx) => {
      const created = await tx.issueAttachment.create({
        data: {
          id,
          companyId: input.companyId,
          issueId: input.issueId,
          fileName: name.fileName,
          contentType,
          sizeBytes: size,
          sha256,
          // Relative to the instance root: the form the reconstruction's hashes read (R-RC-3).
          storagePath: path.posix.join(ATTACHMENTS_DIR, input.companyId, id),
          uploadedByUserId: input.uploadedByUserId,
        },
      });
      await recordActivity(tx, {
        companyId: input.companyId,
        actor: input.actor,
        action: "issue.attachment_added",
        entityType: "issue",
        entityId: input.issueId,
        details: { attachmentId: id, fileName: created.fileName, sizeBytes: size, sha256 },
      });
      return created;
    });
    return { id: row.id, fileName: row.fileName, contentType: row.contentType, sizeBytes: Number(row.sizeBytes), sha256: row.sha256, createdAt: row.createdAt };
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    if (linked) await unlink(final).catch(() => undefined);
    throw error;
  }
}

/** `<root>/attachments/<companyId>`, created if needed; a link on the way is refused. */
async function companyFolder(instanceRoot: string, companyId: string): Promise<string> {
  const root = await realpath(instanceRoot);
  const dir = path.join(root, ATTACHMENTS_DIR, companyId);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const step of [path.join(root, ATTACHMENTS_DIR), dir]) {
    const stat = await lstat(step);
    if (!stat.isDirectory()) throw new DomainError("unavailable", "attachment_store_unsafe", "The attachment store's folder is not a plain directory.");
  }
  return dir;
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const CONTENT_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

/** The media type without parameters, or application/octet-stream for none or a malformed one. */
export function normalizeContentType(raw: string | null | undefined): string {
  const type = (raw ?? "").split(";")[0]!.trim().toLowerCase();
  return CONTENT_TYPE.test(type) ? type : "application/octet-stream";
}

function formatMiB(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB` : `${bytes} bytes`;
}
