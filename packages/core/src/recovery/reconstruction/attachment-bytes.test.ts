import { createHash } from "node:crypto";
import { mkdtemp, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attachmentPath } from "../../attachments/stored-file";
import { hashStoredAttachment } from "./attachment-bytes";

let root = "";
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "copyback-attachments-"));
  await mkdir(path.join(root, "attachments", "a"), { recursive: true });
  await writeFile(path.join(root, "attachments", "a", "notes.md"), "saved notes\n");
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("attachment bytes", () => {
  it("R-RC-3 hashes the stored bytes themselves (sha256 and size)", async () => {
    expect(await hashStoredAttachment(root, "attachments/a/notes.md")).toEqual({ sha256: createHash("sha256").update("saved notes\n").digest("hex"), sizeBytes: 12 });
  });

  it("R-RC-3 a path that leaves the instance root, or a missing file, has no hash", async () => {
    expect(attachmentPath(root, "../etc/passwd")).toBeNull();
    expect(attachmentPath(root, "/etc/passwd")).toBeNull();
    expect(attachmentPath(root, "")).toBeNull();
    expect(await hashStoredAttachment(root, "../../etc/hostname")).toBeNull();
    expect(await hashStoredAttachment(root, "attachments/a/missing.md")).toBeNull();
    // A directory is not an attachment's bytes.
    expect(await hashStoredAttachment(root, "attachments/a")).toBeNull();
  });

  it("R-RC-3 a symbolic link out of the store is not followed", async () => {
    await symlink("/etc/hostname", path.join(root, "attachments", "a", "link.md"));
    expect(await hashStoredAttachment(root, "attachments/a/link.md")).toBeNull();
    // ... nor a linked directory on the way.
    await symlink("/etc", path.join(root, "attachments", "etc"));
    expect(await hashStoredAttachment(root, "attachments/etc/hostname")).toBeNull();
  });
});
