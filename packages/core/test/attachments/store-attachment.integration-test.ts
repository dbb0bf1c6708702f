// Task attachments on a real PostgreSQL with real files: what an upload writes (the row and the
// bytes under the instance root, in the form the reconstruction's hashes read, R-RC-3), what a
// failed upload leaves (nothing), and what a read refuses.
import { createHash, randomUUID } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, symlink, writeFile, mkdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { listAttachments, readAttachment } from "../../src/attachments/read-attachment";
import { storeAttachment } from "../../src/attachments/store-attachment";
import { hashStoredAttachment } from "../../src/recovery/reconstruction/attachment-bytes";
import { createExportHoldPlace } from "../support/export-hold";

const db = useTestDatabase();
const actor = { type: "local_board" as const, id: null };
let home = "";
let companyId = "";
let issueId = "";
let otherCompanyId = "";

async function* chunks(...parts: string[]): AsyncIterable<Uint8Array> {
  for (const part of parts) yield Buffer.from(part);
}

async function newIssue(company: string): Promise<string> {
  const issue = await db.prisma().issue.create({ data: { companyId: company, number: Math.floor(Math.random() * 1e9), identifier: `AT-${randomUUID().slice(0, 8)}`, title: "Attachments" } });
  return issue.id;
}

async function filesIn(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), "copyback-attach-store-"));
  companyId = (await createExportHoldPlace(db.prisma(), "Attach")).companyId;
  otherCompanyId = (await createExportHoldPlace(db.prisma(), "Other")).companyId;
  issueId = await newIssue(companyId);
});
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

describe("storing an attachment", () => {
  it("R-RC-3 an upload writes the row and the bytes; the sha256 and size are those of the bytes, and the reconstruction's hash reads the same", async () => {
    const stored = await storeAttachment(db.prisma(), home, { companyId, issueId, fileName: "../notes.md", contentType: "text/markdown; charset=utf-8", bytes: chunks("# saved ", "notes\n"), uploadedByUserId: null, actor });
    const expected = createHash("sha256").update("# saved notes\n").digest("hex");
    expect(stored).toMatchObject({ fileName: "notes.md", contentType: "text/markdown", sizeBytes: 14, sha256: expected });
    const row = await db.prisma().issueAttachment.findUniqueOrThrow({ where: { id: stored.id } });
    expect(row.storagePath).toBe(`attachments/${companyId}/${stored.id}`);
    expect(await readFile(path.join(home, row.storagePath), "utf8")).toBe("# saved notes\n");
    expect(await hashStoredAttachment(home, row.storagePath)).toEqual({ sha256: expected, sizeBytes: 14 });
    // Its activity row committed with it (and announces the task's change).
    const activity = await db.prisma().activityLog.findMany({ where: { entityType: "issue", entityId: issueId, action: "issue.attachment_added" } });
    expect(activity.map((a) => a.details)).toEqual([{ attachmentId: stored.id, fileName: "notes.md", sizeBytes: 14, sha256: expected }]);
    // No temporary file is left beside it.
    expect(await filesIn(path.join(home, "attachments", companyId))).toEqual([stored.id]);
  });

  it("a file over the cap is refused as too large (413): no row, no file", async () => {
    const issue = await newIssue(companyId);
    const before = await filesIn(path.join(home, "attachments", companyId));
    await expect(storeAttachment(db.prisma(), home, { companyId, issueId: issue, fileName: "big.bin", contentType: null, bytes: chunks("12345", "67890", "x"), uploadedByUserId: null, actor, maxBytes: 10 })).rejects.toMatchObject({ kind: "too_large", code: "attachment_too_large" });
    expect(await db.prisma().issueAttachment.count({ where: { issueId: issue } })).toBe(0);
    expect(await filesIn(path.join(home, "attachments", companyId))).toEqual(before);
  });

  it("a bad name, another company's task and a failing stream leave no row and no file", async () => {
    const issue = await newIssue(companyId);
    const before = await filesIn(path.join(home, "attachments", companyId));
    await expect(storeAttachment(db.prisma(), home, { companyId, issueId: issue, fileName: "a\nb", contentType: null, bytes: chunks("x"), uploadedByUserId: null, actor })).rejects.toMatchObject({ code: "file_name_invalid" });
    await expect(storeAttachment(db.prisma(), home, { companyId: otherCompanyId, issueId: issue, fileName: "x.txt", contentType: null, bytes: chunks("x"), uploadedByUserId: null, actor })).rejects.toMatchObject({ kind: "not_found" });
    async function* broken(): AsyncIterable<Uint8Array> {
      yield Buffer.from("partial");
      throw new Error("client went away");
    }
    await expect(storeAttachment(db.prisma(), home, { companyId, issueId: issue, fileName: "x.txt", contentType: null, bytes: broken(), uploadedByUserId: null, actor })).rejects.toThrow("client went away");
    // A row that cannot be written (an uploader who does not exist) removes the stored file again.
    await expect(storeAttachment(db.prisma(), home, { companyId, issueId: issue, fileName: "x.txt", contentType: null, bytes: chunks("x"), uploadedByUserId: randomUUID(), actor })).rejects.toThrow();
    expect(await db.prisma().issueAttachment.count({ where: { issueId: issue } })).toBe(0);
    expect(await db.prisma().activityLog.count({ where: { entityId: issue } })).toBe(0);
    expect(await filesIn(path.join(home, "attachments", companyId))).toEqual(before);
    expect(await filesIn(path.join(home, "attachments", otherCompanyId))).toEqual([]);
  });

  it("a link in place of the company's folder is refused; nothing is written through it", async () => {
    const place = await createExportHoldPlace(db.prisma(), "Linked");
    const issue = await newIssue(place.companyId);
    const outside = await mkdtemp(path.join(os.tmpdir(), "copyback-attach-outside-"));
    try {
      await mkdir(path.join(home, "attachments"), { recursive: true });
      await symlink(outside, path.join(home, "attachments", place.companyId));
      await expect(storeAttachment(db.prisma(), home, { companyId: place.companyId, issueId: issue, fileName: "x.txt", contentType: null, bytes: chunks("x"), uploadedByUserId: null, actor })).rejects.toMatchObject({ code: "attachment_store_unsafe" });
      expect(await readdir(outside)).toEqual([]);
      expect(await db.prisma().issueAttachment.count({ where: { issueId: issue } })).toBe(0);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe("reading an attachment", () => {
  it("R-RC-5 reads the stored bytes of the task's own attachment, with its sha256", async () => {
    const stored = await storeAttachment(db.prisma(), home, { companyId, issueId, fileName: "plan.txt", contentType: "text/plain", bytes: chunks("the plan\n"), uploadedByUserId: null, actor });
    const opened = await readAttachment(db.prisma(), home, { companyId, issueId, attachmentId: stored.id });
    let text = "";
    for await (const chunk of opened.stream) text += String(chunk);
    expect(text).toBe("the plan\n");
    expect(opened.sha256).toBe(createHash("sha256").update(text).digest("hex"));
    expect((await listAttachments(db.prisma(), { companyId, issueId })).map((a) => a.id)).toContain(stored.id);
  });

  it("another task's or company's attachment reads as not found", async () => {
    const stored = await storeAttachment(db.prisma(), home, { companyId, issueId, fileName: "own.txt", contentType: null, bytes: chunks("x"), uploadedByUserId: null, actor });
    const otherIssue = await newIssue(companyId);
    await expect(readAttachment(db.prisma(), home, { companyId, issueId: otherIssue, attachmentId: stored.id })).rejects.toMatchObject({ kind: "not_found" });
    await expect(readAttachment(db.prisma(), home, { companyId: otherCompanyId, issueId, attachmentId: stored.id })).rejects.toMatchObject({ kind: "not_found" });
    expect(await listAttachments(db.prisma(), { companyId: otherCompanyId, issueId })).toEqual([]);
  });

  it("R-RC-3 a stored file whose size changed, or that was replaced by a link, is refused", async () => {
    const changed = await storeAttachment(db.prisma(), home, { companyId, issueId, fileName: "changed.txt", contentType: null, bytes: chunks("original"), uploadedByUserId: null, actor });
    await writeFile(path.join(home, "attachments", companyId, changed.id), "tampered with");
    await expect(readAttachment(db.prisma(), home, { companyId, issueId, attachmentId: changed.id })).rejects.toMatchObject({ kind: "conflict", code: "attachment_changed" });

    const linked = await storeAttachment(db.prisma(), home, { companyId, issueId, fileName: "linked.txt", contentType: null, bytes: chunks("x"), uploadedByUserId: null, actor });
    const file = path.join(home, "attachments", companyId, linked.id);
    await rm(file);
    await writeFile(path.join(home, "elsewhere.txt"), "y");
    await symlink(path.join(home, "elsewhere.txt"), file);
    await expect(readAttachment(db.prisma(), home, { companyId, issueId, attachmentId: linked.id })).rejects.toMatchObject({ code: "attachment_unavailable" });
  });
});
