// Extraction re-checks every entry against what was validated: an archive rewritten between
// validation and extraction (same open file) is stopped at the first differing entry and the
// destination is emptied again.
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { FileHandle } from "node:fs/promises";
import { ArchiveExtractionError, extractValidatedArchive } from "../../src/copyback/archive/index";
import { tempDir } from "./helpers";
import { dir, file, tar } from "./tar-builder";
import type * as Validate from "../../src/copyback/archive/validate";

const swap = vi.hoisted(() => ({ file: "", bytes: undefined as Buffer | undefined }));

vi.mock("../../src/copyback/archive/validate", async (importActual) => {
  const actual = await importActual<typeof Validate>();
  return {
    ...actual,
    inspectArchive: async (
      handle: FileHandle,
      limits: Parameters<typeof actual.inspectArchive>[1],
    ) => {
      const result = await actual.inspectArchive(handle, limits);
      // Rewrite the validated file in place: the open handle now reads different bytes.
      if (swap.bytes) await writeFile(swap.file, swap.bytes);
      return result;
    },
  };
});

let tmp: { path: string; cleanup(): Promise<void> };
beforeEach(async () => {
  tmp = await tempDir("tamper");
});
afterEach(async () => tmp.cleanup());

describe("extraction after validation", () => {
  it("R-UA-4: an archive changed after validation is stopped at the first differing entry and nothing stays extracted", async () => {
    const archive = join(tmp.path, "a.tar");
    await writeFile(archive, tar(dir("ok/"), file("ok/a.txt", "a"), file("b.txt", "b")));
    swap.file = archive;
    swap.bytes = tar(dir("ok/"), file("ok/a.txt", "a"), file("../evil.txt", "evil"));
    const dest = join(tmp.path, "dest");
    await mkdir(dest);
    const error = await extractValidatedArchive(archive, dest).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArchiveExtractionError);
    expect((error as ArchiveExtractionError).code).toBe("archive_extraction_failed");
    expect((error as Error).message).toContain("changed after it was validated");
    expect(await readdir(dest)).toEqual([]);
    expect((await readdir(tmp.path)).sort()).toEqual(["a.tar", "dest"]);
  });
});
