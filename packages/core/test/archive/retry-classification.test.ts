import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UnsafeArchiveError, extractValidatedArchive } from "../../src/copyback/archive/index";
import { classifyCopybackFailure } from "../../src/copyback/merge/index";
import { tempDir } from "./helpers";
import { file, tar } from "./tar-builder";

let tmp: { path: string; cleanup(): Promise<void> };
beforeEach(async () => {
  tmp = await tempDir("classify");
});
afterEach(async () => tmp.cleanup());

describe("retry classification of archive failures", () => {
  it("R-RR-1: an unsafe archive is never retried, even when wrapped by a provider error", async () => {
    const archive = join(tmp.path, "a.tar");
    await writeFile(archive, tar(file("../evil", "x")));
    const dest = join(tmp.path, "dest");
    await mkdir(dest);
    const error = await extractValidatedArchive(archive, dest).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsafeArchiveError);
    expect(classifyCopybackFailure(error)).toEqual({ retryable: false, reason: "unsafe_archive" });
    const wrapped = Object.assign(new Error("provider export failed"), {
      code: "provider_export",
      cause: error,
    });
    expect(classifyCopybackFailure(wrapped)).toEqual({
      retryable: false,
      reason: "unsafe_archive",
    });
  });
});
