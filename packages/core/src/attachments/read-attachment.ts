// Reading a task's attachment: its row, scoped to the company and the task (another task's or
// company's attachment reads as missing), and its stored bytes opened without following a link.
// A file whose size no longer matches its row was changed behind the store's back: refused
// (attachment_changed), as a reconstruction refuses a changed attachment (R-RC-3).
import type { Readable } from "node:stream";
import type { PrismaClient } from "@copyback/db/client";
import { DomainError } from "../errors";
import { openStoredAttachment } from "./stored-file";

export interface AttachmentSummary {
  id: string;
  fileName: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  createdAt: Date;
}

export interface OpenedAttachment extends AttachmentSummary {
  /** The bytes; it closes the file when read to the end or destroyed. */
  stream: Readable;
}

const SUMMARY = { id: true, fileName: true, contentType: true, sizeBytes: true, sha256: true, createdAt: true } as const;

function summaryOf(row: { id: string; fileName: string; contentType: string; sizeBytes: bigint; sha256: string; createdAt: Date }): AttachmentSummary {
  return { ...row, sizeBytes: Number(row.sizeBytes) };
}

/** The task's attachments, oldest first. */
export async function listAttachments(db: PrismaClient, key: { companyId: string; issueId: string }): Promise<AttachmentSummary[]> {
  const rows = await db.issueAttachment.findMany({ where: { companyId: key.companyId, issueId: key.issueId }, select: SUMMARY, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return rows.map(summaryOf);
}

export async function readAttachment(db: PrismaClient, instanceRoot: string, key: { companyId: string; issueId: string; attachmentId: string }): Promise<OpenedAttachment> {
  const row = await db.issueAttachment.findFirst({ where: { id: key.attachmentId, companyId: key.companyId, issueId: key.issueId }, select: { ...SUMMARY, storagePath: true } });
  if (!row) throw new DomainError("not_found", "not_found", "Attachment was not found.");
  const opened = await openStoredAttachment(instanceRoot, row.storagePath);
  if (!opened) throw new DomainError("unavailable", "attachment_unavailable", "The attachment's stored file cannot be read.");
  if (opened.sizeBytes !== Number(row.sizeBytes)) {
    await opened.handle.close();
    throw new DomainError("conflict", "attachment_changed", "The attachment's stored file no longer matches what was uploaded.");
  }
  const { storagePath: _storagePath, ...summary } = row;
  return { ...summaryOf(summary), stream: opened.handle.createReadStream() };
}
