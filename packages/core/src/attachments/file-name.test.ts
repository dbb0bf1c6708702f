import { describe, expect, it } from "vitest";
import { MAX_FILE_NAME_LENGTH, decideAttachmentFileName } from "./file-name";
import { normalizeContentType } from "./store-attachment";

describe("attachment file names", () => {
  it.each([
    ["notes.md", "notes.md"],
    ["../../etc/passwd", "passwd"],
    ["/abs/path/report.pdf", "report.pdf"],
    ["C:\\Users\\me\\draft v2.txt", "draft v2.txt"],
    ["  spaced.txt  ", "spaced.txt"],
    ["Übersicht – Plan.md", "Übersicht – Plan.md"],
  ])("keeps only the last part of %j", (raw, expected) => {
    expect(decideAttachmentFileName(raw)).toEqual({ kind: "accept", fileName: expected });
  });

  it.each([[null], [undefined], [""], ["   "], ["dir/"], [".."], ["a/.."], ["."]])("refuses an empty name (%j)", (raw) => {
    expect(decideAttachmentFileName(raw)).toMatchObject({ kind: "reject", code: "file_name_missing" });
  });

  it.each([["a\nb.txt"], ["a\rb"], ["tab\there"], ["nul\u0000"], ["del\u007f"], ["c1\u0085"]])("refuses control characters (%j)", (raw) => {
    expect(decideAttachmentFileName(raw)).toMatchObject({ kind: "reject", code: "file_name_invalid" });
  });

  it("refuses a name longer than the limit", () => {
    expect(decideAttachmentFileName("x".repeat(MAX_FILE_NAME_LENGTH))).toMatchObject({ kind: "accept" });
    expect(decideAttachmentFileName("x".repeat(MAX_FILE_NAME_LENGTH + 1))).toMatchObject({ kind: "reject", code: "file_name_too_long" });
  });

  it("content types: the media type without parameters, octet-stream for none or a malformed one", () => {
    expect(normalizeContentType("Text/Markdown; charset=utf-8")).toBe("text/markdown");
    expect(normalizeContentType(null)).toBe("application/octet-stream");
    expect(normalizeContentType("not a type")).toBe("application/octet-stream");
    expect(normalizeContentType("text/html\r\nx: y")).toBe("application/octet-stream");
  });
});
