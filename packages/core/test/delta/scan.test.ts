// scanWorkspace: the same manifest as takeManifest, with only changed files read again.
import { chmod, mkdir, readFile, stat, symlink, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { scanWorkspace, type CachedFileStat } from "../../src/copyback/delta/index";
import { takeManifest } from "../../src/copyback/manifest/index";
import { removeTempDirs, tempDir } from "./helpers";

afterEach(removeTempDirs);

/** A workspace whose files are old enough to be cached (older than the racy window). */
async function workspace(): Promise<string> {
  const root = path.join(await tempDir("scan"), "ws");
  await mkdir(path.join(root, "src/deep"), { recursive: true });
  await mkdir(path.join(root, "node_modules/x"), { recursive: true });
  await writeFile(path.join(root, "a.txt"), "alpha");
  await writeFile(path.join(root, "src/b.ts"), "export {}\n");
  await writeFile(path.join(root, "src/deep/c.bin"), Buffer.alloc(70_000, 7));
  await writeFile(path.join(root, "node_modules/x/i.js"), "x");
  await writeFile(path.join(root, "run.sh"), "#!/bin/sh\n");
  await chmod(path.join(root, "run.sh"), 0o755);
  await chmod(path.join(root, "src/deep"), 0o750);
  await symlink("src/b.ts", path.join(root, "link"));
  await ageFiles(root, ["a.txt", "src/b.ts", "src/deep/c.bin", "run.sh", "node_modules/x/i.js"]);
  return root;
}

/** Moves mtimes back an hour. utimes sets ctime to now, so ctime stays racy: see below. */
async function ageFiles(root: string, files: string[]): Promise<void> {
  const old = new Date(Date.now() - 3_600_000);
  for (const f of files) await utimes(path.join(root, f), old, old);
}

describe("scanWorkspace", () => {
  it("computes exactly takeManifest's manifest, exclusions included", async () => {
    const root = await workspace();
    const scan = await scanWorkspace(root, { exclude: ["node_modules"] });
    expect(scan.manifest).toEqual(await takeManifest(root, { exclude: ["node_modules"] }));
    expect(scan.hashedFiles).toBe(4);
  });

  it("files written just now are racy: never cached, hashed again next time", async () => {
    const root = await workspace(); // ctimes are "now" (utimes just ran)
    const first = await scanWorkspace(root);
    expect(Object.keys(first.cache.files)).toEqual([]);
    const second = await scanWorkspace(root, { cache: first.cache });
    expect(second.hashedFiles).toBe(5);
  });

  it("without a racy window (the seed), a file written earlier in the scan's own millisecond is cached too", async () => {
    // A file's ctime has sub-millisecond precision and Date.now() does not, so "before the scan"
    // must include the scan's current millisecond. Over many writes some land in it.
    const root = path.join(await tempDir("scan-ms"), "ws");
    await mkdir(root, { recursive: true });
    for (let i = 0; i < 100; i++) {
      await writeFile(path.join(root, "f.txt"), `version ${i}\n`);
      const scan = await scanWorkspace(root, { racyWindowMs: 0 });
      expect(Object.keys(scan.cache.files)).toEqual(["f.txt"]);
    }
  });

  it("with a trusted cache, unchanged files are not read; a changed one is, even with its mtime restored", async () => {
    const root = await workspace();
    const first = await scanWorkspace(root);
    // Simulate a cache taken long after the files were written: accept every racy entry.
    const cache = { version: 1 as const, files: await trustedCache(root, first.manifest.entries) };
    const same = await scanWorkspace(root, { cache });
    expect(same.hashedFiles).toBe(0);
    expect(same.manifest).toEqual(await takeManifest(root));

    // Same size, mtime put back: ctime still moves, so the change is seen.
    const file = path.join(root, "src/b.ts");
    const before = await stat(file);
    await writeFile(file, "export {}\r");
    await utimes(file, before.atime, before.mtime);
    const changed = await scanWorkspace(root, { cache });
    expect(changed.hashedFiles).toBe(1);
    expect(changed.manifest).toEqual(await takeManifest(root));
    expect(await readFile(file, "utf8")).toBe("export {}\r");
  });

  it("keeps the previous cache object while nothing new is cached; a new record drops the records of changed and removed files", async () => {
    const root = await workspace();
    const first = await scanWorkspace(root);
    const cache = { version: 1 as const, files: await trustedCache(root, first.manifest.entries) };
    const same = await scanWorkspace(root, { cache });
    expect(same.hashedFiles).toBe(0);
    expect(same.cache).toBe(cache);

    await writeFile(path.join(root, "a.txt"), "alpha v2"); // changed: racy now, not cached
    const { rm } = await import("node:fs/promises");
    await rm(path.join(root, "run.sh"));
    // Nothing new is cached: the same cache (its a.txt record no longer matches, and never will).
    const racy = await scanWorkspace(root, { cache });
    expect(racy.hashedFiles).toBe(1);
    expect(racy.cache).toBe(cache);
    expect(racy.manifest).toEqual(await takeManifest(root));
    const again = await scanWorkspace(root, { cache: racy.cache });
    expect(again.hashedFiles).toBe(1);
    expect(again.manifest.entries.find((e) => e.path === "a.txt")?.sha256).toBe(racy.manifest.entries.find((e) => e.path === "a.txt")?.sha256);

    // A record cached now (no racy window): a new cache, without the records that did not hold.
    const after = await scanWorkspace(root, { cache, racyWindowMs: 0 });
    expect(after.hashedFiles).toBe(1);
    expect(after.cache).not.toBe(cache);
    expect(Object.keys(after.cache.files).sort()).toEqual([
      "a.txt",
      "node_modules/x/i.js",
      "src/b.ts",
      "src/deep/c.bin",
    ]);
    expect(after.cache.files["src/b.ts"]).toBe(cache.files["src/b.ts"]);
    expect(after.cache.files["a.txt"]).not.toEqual(cache.files["a.txt"]);
    expect(after.manifest).toEqual(await takeManifest(root));
    // The cache given in was not changed.
    expect(Object.keys(cache.files).sort()).toEqual([
      "a.txt",
      "node_modules/x/i.js",
      "run.sh",
      "src/b.ts",
      "src/deep/c.bin",
    ]);
  });

  it("refuses a FIFO like takeManifest (unsupported_entry)", async () => {
    const root = await workspace();
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [path.join(root, "pipe")]);
    await expect(scanWorkspace(root)).rejects.toMatchObject({ code: "unsupported_entry" });
  });
});

/** A cache as a scan long after the writes would have produced it (real stat values). */
async function trustedCache(
  root: string,
  entries: { path: string; type: string; sha256?: string; mode: number; size?: number }[],
) {
  const { lstat } = await import("node:fs/promises");
  const files: Record<string, CachedFileStat> = {};
  for (const e of entries) {
    if (e.type !== "file") continue;
    const st = await lstat(path.join(root, e.path));
    files[e.path] = {
      size: st.size,
      mode: e.mode,
      ino: st.ino,
      mtimeMs: st.mtimeMs,
      ctimeMs: st.ctimeMs,
      sha256: e.sha256 ?? "",
    };
  }
  return files;
}
