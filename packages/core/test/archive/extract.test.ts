import { lstat, mkdir, readdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ArchiveDestinationError,
  ArchiveReadError,
  extractValidatedArchive,
  validateArchive,
} from "../../src/copyback/archive/index";
import { describeTree, tempDir } from "./helpers";
import { dir, file, pax, paxRecord, symlink as tarSymlink, tar } from "./tar-builder";

let tmp: { path: string; cleanup(): Promise<void> };

beforeEach(async () => {
  tmp = await tempDir("extract");
});
afterEach(async () => tmp.cleanup());

async function archiveOf(bytes: Buffer): Promise<string> {
  const path = join(tmp.path, `a-${Math.random().toString(36).slice(2)}.tar`);
  await writeFile(path, bytes);
  return path;
}

describe("extractValidatedArchive", () => {
  it("keeps permission bits but never setuid, setgid or sticky", async () => {
    const archive = await archiveOf(
      tar(
        dir("shared/", { mode: 0o3775 }),
        file("shared/tool", "#!/bin/sh\n", { mode: 0o4755 }),
        file("plain", "x", { mode: 0o640 }),
      ),
    );
    const dest = join(tmp.path, "dest");
    await mkdir(dest);
    await extractValidatedArchive(archive, dest);
    expect((await lstat(join(dest, "shared"))).mode & 0o7777).toBe(0o775);
    expect((await lstat(join(dest, "shared/tool"))).mode & 0o7777).toBe(0o755);
    expect((await lstat(join(dest, "plain"))).mode & 0o7777).toBe(0o640);
  });

  it("creates symlinks exactly, including links to links and links to directories", async () => {
    const archive = await archiveOf(
      tar(
        dir("d/"),
        file("d/f", "x"),
        tarSymlink("a", "b"),
        tarSymlink("b", "d/f"),
        tarSymlink("dl", "d"),
        tarSymlink("d/up", ".."),
      ),
    );
    const dest = join(tmp.path, "dest");
    await mkdir(dest);
    await extractValidatedArchive(archive, dest);
    const tree = await describeTree(dest);
    expect(tree["a"]).toMatchObject({ type: "symlink", target: "b" });
    expect(tree["b"]).toMatchObject({ type: "symlink", target: "d/f" });
    expect(tree["dl"]).toMatchObject({ type: "symlink", target: "d" });
    expect(tree["d/up"]).toMatchObject({ type: "symlink", target: ".." });
  });

  it("accepts what real archivers write: a './' root, directories after their files, xattr pax keys, one trailing zero block", async () => {
    const bytes = Buffer.concat([
      dir("./"),
      file("./x/y.txt", "y"),
      dir("./x/", { mode: 0o750 }),
      pax(paxRecord("SCHILY.xattr.user.note", "hello") + paxRecord("mtime", "1700000000.5")),
      file("./z.txt", "z"),
      Buffer.alloc(512),
    ]);
    const archive = await archiveOf(bytes);
    expect(await validateArchive(archive)).toEqual({ kind: "safe", entries: 3, totalBytes: 2 });
    const dest = join(tmp.path, "dest");
    await mkdir(dest);
    await extractValidatedArchive(archive, dest);
    expect(Object.keys(await describeTree(dest))).toEqual(["x", "x/y.txt", "z.txt"]);
    expect((await lstat(join(dest, "x"))).mode & 0o777).toBe(0o750);
  });

  it("refuses a destination that is not empty, and leaves it as it was", async () => {
    const archive = await archiveOf(tar(file("f", "x")));
    const dest = join(tmp.path, "dest");
    await mkdir(dest);
    await writeFile(join(dest, "keep.txt"), "mine");
    const error = await extractValidatedArchive(archive, dest).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArchiveDestinationError);
    expect((error as ArchiveDestinationError).code).toBe("archive_destination_invalid");
    expect((error as Error).message).not.toContain(tmp.path);
    expect(await readdir(dest)).toEqual(["keep.txt"]);
  });

  it("refuses a missing destination, a file, and a symlink to a directory", async () => {
    const archive = await archiveOf(tar(file("f", "x")));
    const real = join(tmp.path, "real");
    await mkdir(real);
    const linkDest = join(tmp.path, "link-dest");
    await symlink(real, linkDest);
    const fileDest = join(tmp.path, "file-dest");
    await writeFile(fileDest, "");
    for (const dest of [join(tmp.path, "missing"), fileDest, linkDest]) {
      await expect(extractValidatedArchive(archive, dest)).rejects.toBeInstanceOf(
        ArchiveDestinationError,
      );
    }
    expect(await readdir(real)).toEqual([]);
  });

  it("reports an unreadable archive file with a coded error and no host path, writing nothing", async () => {
    const missing = join(tmp.path, "missing.tar");
    const dest = join(tmp.path, "dest");
    await mkdir(dest);
    for (const attempt of [validateArchive(missing), extractValidatedArchive(missing, dest)]) {
      const error = await attempt.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ArchiveReadError);
      expect((error as ArchiveReadError).code).toBe("archive_unreadable");
      expect((error as ArchiveReadError).errno).toBe("ENOENT");
      expect((error as Error).message).not.toContain(tmp.path);
    }
    expect(await readdir(dest)).toEqual([]);
  });
});

describe("emptyDirectory", () => {
  it("R-UA-4 removes a deep tree with read-only directories, never following a link out of it", async () => {
    const { emptyDirectory } = await import("../../src/copyback/archive/extract");
    const { chmod } = await import("node:fs/promises");
    const outside = join(tmp.path, "outside");
    await mkdir(join(outside, "keep"), { recursive: true });
    await writeFile(join(outside, "keep", "k.txt"), "kept");
    const target = join(tmp.path, "target");
    let at = target;
    for (let depth = 0; depth < 6; depth++) {
      at = join(at, `d${depth}`);
      await mkdir(at, { recursive: true });
      for (let i = 0; i < 40; i++) await writeFile(join(at, `f${i}.txt`), "x");
    }
    await symlink(outside, join(target, "d0", "link-to-outside"));
    await symlink(join(outside, "keep", "k.txt"), join(target, "d0", "d1", "file-link"));
    await chmod(join(target, "d0", "d1", "d2"), 0o500);
    await chmod(join(target, "d0"), 0o555);
    await emptyDirectory(target);
    expect(await readdir(target)).toEqual([]);
    expect(await readdir(join(outside, "keep"))).toEqual(["k.txt"]);
  });
});
