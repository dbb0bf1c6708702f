// `copyback manifest take DIR [-o FILE]`: a baseline manifest, to stdout or atomically to a file.
import { readFile, readdir, symlink } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseManifest, takeManifest } from "../../src/copyback/manifest/index";
import { parseJson, removeTempDirs, runCli, tempDir, writeTree } from "./helpers";

afterEach(removeTempDirs);

async function workspace(): Promise<string> {
  const dir = path.join(await tempDir("manifest"), "ws");
  await writeTree(dir, { "a.txt": "a", "src/b.ts": "export {}\n", "node_modules/x/index.js": "x" });
  await symlink("src/b.ts", path.join(dir, "link"));
  return dir;
}

describe("copyback manifest take", () => {
  it("-o writes the manifest that takeManifest computes, as parseable JSON (exit 0)", async () => {
    const dir = await workspace();
    const out = path.join(path.dirname(dir), "baseline.json");
    const run = await runCli(["manifest", "take", dir, "-o", out, "--exclude", "node_modules"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^wrote .*baseline\.json: 4 entries \(2 files, 1 directories, 1 symlinks/,
    );
    const written = parseManifest(JSON.parse(await readFile(out, "utf8")));
    expect(written).toEqual(await takeManifest(dir, { exclude: ["node_modules"] }));
    expect(written.entries.some((e) => e.path.startsWith("node_modules"))).toBe(false);
    // No temporary is left beside it.
    expect(await readdir(path.dirname(out))).toEqual(["baseline.json", "ws"]);
  });

  it("without -o the manifest itself is printed; with --json it is wrapped with counts", async () => {
    const dir = await workspace();
    const plain = await runCli(["manifest", "take", dir]);
    expect(plain.code).toBe(0);
    expect(parseManifest(JSON.parse(plain.stdout))).toEqual(await takeManifest(dir));

    const doc = parseJson(await runCli(["--json", "manifest", "take", dir]));
    expect(doc).toMatchObject({
      ok: true,
      command: "manifest take",
      exitCode: 0,
      entries: 7,
      files: 3,
      symlinks: 1,
    });
    expect(parseManifest(doc.manifest)).toEqual(await takeManifest(dir));
  });

  it("a missing directory or a bad exclusion is a usage error (exit 2) and writes nothing", async () => {
    const dir = await workspace();
    const out = path.join(path.dirname(dir), "never.json");
    const missing = await runCli(["manifest", "take", path.join(dir, "nope"), "-o", out]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("cannot be read");
    const badExclude = await runCli(["manifest", "take", dir, "-o", out, "--exclude", "../up"]);
    expect(badExclude.code).toBe(2);
    expect(await readdir(path.dirname(dir))).toEqual(["ws"]);
  });
});
