// `copyback archive check FILE`: exit 0 safe, 1 rejected (each violation explained), 2 unreadable.
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  hostileArchive,
  parseJson,
  removeTempDirs,
  runCli,
  tarDirectory,
  tempDir,
  writeTree,
} from "./helpers";

afterEach(removeTempDirs);

describe("copyback archive check", () => {
  it("a safe archive: exit 0, entry count and bytes", async () => {
    const work = await tempDir("check");
    await writeTree(path.join(work, "ws"), { "a.txt": "hello\n", "sub/b.txt": "12345" });
    const file = path.join(work, "ws.tar");
    tarDirectory(path.join(work, "ws"), file);

    const run = await runCli(["archive", "check", file]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^safe: 3 entries/);

    const json = await runCli(["archive", "check", file, "--json"]);
    expect(json.code).toBe(0);
    expect(parseJson(json)).toEqual({
      ok: true,
      command: "archive check",
      exitCode: 0,
      archive: file,
      result: "safe",
      entries: 3,
      totalBytes: 11,
    });
  });

  it("R-UA-2: a hostile archive is rejected (exit 1) with code, archive path and detail for each violation", async () => {
    const work = await tempDir("check");
    const file = await hostileArchive(work);

    const run = await runCli(["archive", "check", file]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^rejected: 3 violation\(s\)/);
    expect(run.stdout).toMatch(/parent_traversal\s+\.\.\/evil\.txt/);
    expect(run.stdout).toMatch(/absolute_symlink\s+\.\/passwd-link/);
    expect(run.stdout).toMatch(/hard_link\s+\.\/twin-b\.txt/);

    const doc = parseJson(await runCli(["--json", "archive", "check", file]));
    expect(doc).toMatchObject({
      ok: false,
      command: "archive check",
      exitCode: 1,
      result: "rejected",
    });
    const violations = doc.violations as { code: string; path: string; detail: string }[];
    expect(violations.map((v) => v.code).sort()).toEqual([
      "absolute_symlink",
      "hard_link",
      "parent_traversal",
    ]);
    for (const v of violations) {
      expect(v.detail.length).toBeGreaterThan(0);
      // R-UA-4: archive-relative paths only, never the host path of the workspace or the link target.
      expect(v.path).not.toContain(work);
      expect(JSON.stringify(v)).not.toContain("/etc/passwd");
    }
  });

  it("checking extracts nothing: the archive's directory holds no new entry afterwards", async () => {
    const work = await tempDir("check");
    const file = await hostileArchive(work);
    const { readdir } = await import("node:fs/promises");
    const before = (await readdir(work)).sort();
    await runCli(["archive", "check", file]);
    expect((await readdir(work)).sort()).toEqual(before);
    expect((await readdir(path.dirname(work))).includes("evil.txt")).toBe(false);
  });

  it("garbage that is not a tar archive is rejected, not a crash (exit 1)", async () => {
    const work = await tempDir("check");
    const file = path.join(work, "junk.tar");
    await writeTree(work, { "junk.tar": "this is not a tar archive at all".repeat(40) });
    const run = await runCli(["--json", "archive", "check", file]);
    expect(run.code).toBe(1);
    expect(parseJson(run)).toMatchObject({ result: "rejected" });
  });

  it("a missing file is a usage error (exit 2) with one clear line and no stack trace", async () => {
    const run = await runCli(["archive", "check", "/nonexistent/archive.tar"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "copyback archive check: The archive /nonexistent/archive.tar cannot be read (ENOENT).\n",
    );
    expect(run.stdout).toBe("");
  });
});
