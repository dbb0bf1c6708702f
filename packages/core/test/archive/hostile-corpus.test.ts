import { mkdir, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  UnsafeArchiveError,
  extractValidatedArchive,
  validateArchive,
} from "../../src/copyback/archive/index";
import { inspectArchive } from "../../src/copyback/archive/validate";
import { resolveLimits } from "../../src/copyback/archive/limits";
import { open } from "node:fs/promises";
import { HOSTILE_CASES, type HostileCase } from "./hostile-corpus";
import { tempDir } from "./helpers";

let base: { path: string; cleanup(): Promise<void> };
let tmpListingBefore: string[];

beforeAll(async () => {
  base = await tempDir("corpus");
  tmpListingBefore = (await readdir(tmpdir())).filter((n) => n.includes("evil"));
});
afterAll(async () => {
  await base.cleanup();
});

/** Per case: <case>/archive, <case>/dest (empty), <case>/outside (target of absolute attacks). */
async function prepare(c: HostileCase, index: number) {
  const root = join(base.path, `case-${index}`);
  const dest = join(root, "dest");
  const outside = join(root, "outside");
  await mkdir(dest, { recursive: true });
  await mkdir(outside, { recursive: true });
  const archive = join(root, "archive");
  await writeFile(archive, c.build(outside));
  return { root, dest, outside, archive };
}

function assertNoHostPathLeaks(violations: { path: string; detail: string }[], root: string) {
  for (const v of violations) {
    expect(v.path.startsWith("/")).toBe(false);
    expect(v.path).not.toContain(root);
    expect(v.detail).not.toContain(root);
    expect(v.detail).not.toContain("/etc");
  }
}

describe("hostile archive corpus", () => {
  it("has at least 30 distinct hostile archives", () => {
    expect(HOSTILE_CASES.length).toBeGreaterThanOrEqual(30);
    expect(new Set(HOSTILE_CASES.map((c) => c.name)).size).toBe(HOSTILE_CASES.length);
  });

  HOSTILE_CASES.forEach((c, index) => {
    it(`R-UA-2: validation rejects ${c.name} (${c.code})`, async () => {
      const { archive, root } = await prepare(c, index);
      const result = await validateArchive(archive, c.limits);
      expect(result.kind).toBe("rejected");
      if (result.kind !== "rejected") return;
      expect(result.violations.map((v) => v.code)).toContain(c.code);
      assertNoHostPathLeaks(result.violations, root);
    });
  });

  HOSTILE_CASES.forEach((c, index) => {
    it(`R-UA-4: ${c.name} is never extracted, not even partly`, async () => {
      const { archive, dest, outside, root } = await prepare(c, 1000 + index);
      const error = await extractValidatedArchive(archive, dest, { limits: c.limits }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(UnsafeArchiveError);
      expect((error as UnsafeArchiveError).code).toBe("unsafe_archive");
      expect((error as UnsafeArchiveError).violations.map((v) => v.code)).toContain(c.code);
      expect((error as Error).message).not.toContain(root);
      expect(await readdir(dest)).toEqual([]);
      expect(await readdir(outside)).toEqual([]);
      expect((await readdir(root)).sort()).toEqual(["archive", "dest", "outside"]);
      expect((await readdir(base.path)).filter((n) => !n.startsWith("case-"))).toEqual([]);
    });
  });

  it("R-UA-2: a decompression bomb is abandoned after a few MiB, not inflated", async () => {
    const bomb = HOSTILE_CASES.find((c) => c.code === "compression_ratio") as HostileCase;
    const { archive } = await prepare(bomb, 2000);
    const handle = await open(archive, "r");
    try {
      const inspection = await inspectArchive(handle, resolveLimits());
      expect(inspection.validation.kind).toBe("rejected");
      // The bomb inflates to 256 MiB; reading stopped long before.
      expect(inspection.stats.bytesInflated).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await handle.close();
    }
  });

  it("nothing was written next to the temporary directories either", async () => {
    const after = (await readdir(tmpdir())).filter((n) => n.includes("evil"));
    expect(after).toEqual(tmpListingBefore);
  });
});
