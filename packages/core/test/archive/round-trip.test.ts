import { execFileSync } from "node:child_process";
import { chmod, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { list } from "tar";
import {
  exportWorkspaceArchive,
  extractValidatedArchive,
  validateArchive,
} from "../../src/copyback/archive/index";
import { describeTree, tempDir, writeStream } from "./helpers";
import { gzip } from "./tar-builder";

let tmp: { path: string; cleanup(): Promise<void> };
let ws: string;

beforeEach(async () => {
  tmp = await tempDir("roundtrip");
  ws = join(tmp.path, "ws");
  await mkdir(ws);
});
afterEach(async () => tmp.cleanup());

/** A workspace with the shapes an export must carry faithfully. */
async function buildWorkspace(root: string): Promise<void> {
  await mkdir(join(root, "src/lib/deep"), { recursive: true });
  await mkdir(join(root, "empty/nested-empty"), { recursive: true });
  await mkdir(join(root, "private"), { mode: 0o700 });
  await chmod(join(root, "private"), 0o700);
  await writeFile(join(root, "README.md"), "# hello\n");
  await writeFile(join(root, "empty-file"), "");
  await writeFile(join(root, "src/main.ts"), "export const x = 1;\n");
  await writeFile(
    join(root, "src/lib/deep/data.bin"),
    Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 251)),
  );
  await writeFile(join(root, "private/secret.txt"), "s3cret\n", { mode: 0o600 });
  await chmod(join(root, "private/secret.txt"), 0o600);
  await writeFile(join(root, "run.sh"), "#!/bin/sh\necho hi\n");
  await chmod(join(root, "run.sh"), 0o755);
  // Larger than the writer's read-ahead size, so it is streamed in chunks.
  await writeFile(join(root, "big.dat"), randomBytes(3 * 1024 * 1024 + 123));
  // Names that need pax headers: long, non-ASCII.
  const longDir = join(root, "l".repeat(90), "m".repeat(90));
  await mkdir(longDir, { recursive: true });
  await writeFile(join(longDir, `${"n".repeat(120)}.txt`), "long\n");
  await writeFile(join(root, "unicodé-ファイル.txt"), "utf8\n");
  // Relative symlinks inside the workspace, including a chain and a directory link.
  await symlink("../README.md", join(root, "src/readme-link"));
  await symlink("src/lib", join(root, "lib-link"));
  await symlink("lib-link/deep/data.bin", join(root, "chain-link"));
  await symlink(".", join(root, "src/lib/self"));
  await symlink("not-yet-there.txt", join(root, "dangling-inside"));
}

describe("workspace export round trip", () => {
  it("exports, validates safe, and extracts to an identical tree (lstat + content)", async () => {
    await buildWorkspace(ws);
    const archive = join(tmp.path, "ws.tar");
    await writeStream(exportWorkspaceArchive(ws), archive);

    const validation = await validateArchive(archive);
    expect(validation).toMatchObject({ kind: "safe" });
    const before = await describeTree(ws);
    if (validation.kind === "safe") expect(validation.entries).toBe(Object.keys(before).length);

    const dest = join(tmp.path, "dest");
    await mkdir(dest);
    // Extraction validates again and returns the verdict it acted on.
    expect(await extractValidatedArchive(archive, dest)).toEqual(validation);
    expect(await describeTree(dest)).toEqual(before);
    expect(before["run.sh"]?.mode).toBe(0o755);
    expect(before["private"]?.mode).toBe(0o700);
    expect(before["chain-link"]).toMatchObject({
      type: "symlink",
      target: "lib-link/deep/data.bin",
    });
  });

  it("accepts the same archive gzip-compressed", async () => {
    await buildWorkspace(ws);
    const archive = join(tmp.path, "ws.tar");
    await writeStream(exportWorkspaceArchive(ws), archive);
    const gz = join(tmp.path, "ws.tar.gz");
    await writeFile(gz, gzip(await readFile(archive)));
    expect(await validateArchive(gz)).toMatchObject({ kind: "safe" });
    const dest = join(tmp.path, "dest");
    await mkdir(dest);
    await extractValidatedArchive(gz, dest);
    expect(await describeTree(dest)).toEqual(await describeTree(ws));
  });

  it("rejects a legitimate but extremely compressible gzip archive by default, accepts it with a raised ratio limit", async () => {
    await writeFile(join(ws, "zeros.img"), Buffer.alloc(8 * 1024 * 1024));
    const archive = join(tmp.path, "ws.tar");
    await writeStream(exportWorkspaceArchive(ws), archive);
    const gz = join(tmp.path, "ws.tar.gz");
    await writeFile(gz, gzip(await readFile(archive)));
    const strict = await validateArchive(gz);
    expect(strict.kind === "rejected" && strict.violations.map((v) => v.code)).toEqual([
      "compression_ratio",
    ]);
    expect(await validateArchive(gz, { maxCompressionRatio: 2000 })).toMatchObject({
      kind: "safe",
    });
  });

  it("is portable: GNU tar reads our archive, and we validate and extract GNU tar's", async () => {
    await buildWorkspace(ws);
    const ours = join(tmp.path, "ours.tar");
    await writeStream(exportWorkspaceArchive(ws), ours);
    const byGnu = join(tmp.path, "by-gnu");
    await mkdir(byGnu);
    execFileSync("tar", ["-C", byGnu, "-xf", ours]);
    const expected = await describeTree(ws);
    expect(await describeTree(byGnu)).toEqual(expected);

    const theirs = join(tmp.path, "gnu.tar");
    execFileSync("tar", ["-C", ws, "-cf", theirs, "."]);
    expect(await validateArchive(theirs)).toMatchObject({ kind: "safe" });
    const dest = join(tmp.path, "dest");
    await mkdir(dest);
    await extractValidatedArchive(theirs, dest);
    expect(await describeTree(dest)).toEqual(expected);
  });

  it("exports deterministically: the same tree gives the same bytes, directories first, names sorted", async () => {
    await buildWorkspace(ws);
    const a = join(tmp.path, "a.tar");
    const b = join(tmp.path, "b.tar");
    await writeStream(exportWorkspaceArchive(ws), a);
    await writeStream(exportWorkspaceArchive(ws), b);
    expect((await readFile(a)).equals(await readFile(b))).toBe(true);
    const paths: string[] = [];
    await list({ file: a, onReadEntry: (e) => void paths.push(e.path) });
    expect(paths.every((p) => !p.startsWith("/") && !p.startsWith("./"))).toBe(true);
    expect(paths.indexOf("src/")).toBeLessThan(paths.indexOf("src/main.ts"));
    expect(paths.indexOf("src/lib/")).toBeLessThan(paths.indexOf("src/lib/deep/"));
    const top = paths.map((p) => p.replace(/\/$/, "")).filter((p) => !p.includes("/"));
    expect(top).toEqual([...top].sort());
  });

  it("an empty workspace exports an empty archive that validates and extracts to nothing", async () => {
    const archive = join(tmp.path, "empty.tar");
    await writeStream(exportWorkspaceArchive(ws), archive);
    expect(await validateArchive(archive)).toEqual({ kind: "safe", entries: 0, totalBytes: 0 });
    const dest = join(tmp.path, "dest");
    await mkdir(dest);
    await extractValidatedArchive(archive, dest);
    expect(await describeTree(dest)).toEqual({});
  });
});
