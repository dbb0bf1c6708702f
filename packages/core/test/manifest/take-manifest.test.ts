import { createHash, randomBytes } from "node:crypto";
import { chmod, mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManifestError, takeManifest } from "../../src/copyback/manifest/index";
import { dir, file, link, makeFifo, materialize, removeTempDirs, tempDir } from "../merge/helpers";

afterEach(removeTempDirs);

const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

describe("takeManifest", () => {
  it("lists every entry with path, type, sha256, size, mode and link target, sorted by path", async () => {
    const root = await tempDir("manifest");
    await materialize(root, {
      "b.txt": file("bee", 0o600),
      "a/run.sh": file("#!/bin/sh", 0o755),
      "a/empty": dir(0o700),
      "a-b": file(""),
      "link-to-a": link("a"),
      dangling: link("../nowhere/at/all"),
    });
    const manifest = await takeManifest(root);
    expect(manifest).toEqual({
      version: 1,
      entries: [
        { path: "a", type: "directory", mode: 0o755 },
        { path: "a-b", type: "file", mode: 0o644, sha256: sha(""), size: 0 },
        { path: "a/empty", type: "directory", mode: 0o700 },
        { path: "a/run.sh", type: "file", mode: 0o755, sha256: sha("#!/bin/sh"), size: 9 },
        { path: "b.txt", type: "file", mode: 0o600, sha256: sha("bee"), size: 3 },
        { path: "dangling", type: "symlink", mode: 0o777, target: "../nowhere/at/all" },
        { path: "link-to-a", type: "symlink", mode: 0o777, target: "a" },
      ],
    });
  });

  it("never follows links: a link to a directory outside lists nothing below it", async () => {
    const root = await tempDir("manifest");
    const outside = await tempDir("outside");
    await materialize(outside, { "secret.txt": file("secret") });
    await symlink(outside, path.join(root, "out"));
    expect((await takeManifest(root)).entries).toEqual([
      { path: "out", type: "symlink", mode: 0o777, target: outside },
    ]);
  });

  it("stores permission bits only (setuid, setgid and sticky are masked off)", async () => {
    const root = await tempDir("manifest");
    await materialize(root, { tool: file("t"), shared: dir() });
    await chmod(path.join(root, "tool"), 0o4755);
    await chmod(path.join(root, "shared"), 0o1777);
    const entries = (await takeManifest(root)).entries;
    expect(entries.map((e) => [e.path, e.mode])).toEqual([
      ["shared", 0o777],
      ["tool", 0o755],
    ]);
  });

  it("hashes large files in chunks exactly like a one-shot hash", async () => {
    const root = await tempDir("manifest");
    const big = randomBytes(3 * 1024 * 1024 + 17);
    await writeFile(path.join(root, "big.bin"), big);
    expect((await takeManifest(root)).entries).toEqual([
      { path: "big.bin", type: "file", mode: 0o644, sha256: sha(big), size: big.length },
    ]);
  });

  it("skips excluded trees without entering them (names at any depth, root-relative paths)", async () => {
    const root = await tempDir("manifest");
    await materialize(root, {
      "node_modules/dep/index.js": file("dep"),
      "pkg/node_modules/x.js": file("x"),
      "pkg/src.js": file("s"),
      ".git/HEAD": file("ref"),
      ".git/objects/aa": file("obj"),
    });
    await mkdir(path.join(root, ".git/objects/sub"));
    makeFifo(path.join(root, ".git/objects/sub/fifo")); // would be refused if the walk entered
    const entries = (
      await takeManifest(root, { exclude: ["node_modules", ".git/objects"] })
    ).entries.map((e) => e.path);
    expect(entries).toEqual([".git", ".git/HEAD", "pkg", "pkg/src.js"]);
  });

  it("is deterministic: equal trees built in different orders give identical JSON", async () => {
    const one = await tempDir("manifest");
    const two = await tempDir("manifest");
    const names = Array.from({ length: 200 }, (_, i) => `d${i % 7}/f${i}.txt`);
    for (const name of names) {
      await mkdir(path.dirname(path.join(one, name)), { recursive: true });
      await writeFile(path.join(one, name), name);
    }
    for (const name of [...names].reverse()) {
      await mkdir(path.dirname(path.join(two, name)), { recursive: true });
      await writeFile(path.join(two, name), name);
    }
    const a = JSON.stringify(await takeManifest(one, { concurrency: 1 }));
    const b = JSON.stringify(await takeManifest(two, { concurrency: 32 }));
    expect(a).toBe(b);
    expect(JSON.parse(a).entries).toHaveLength(207);
  });

  it("refuses entries other than files, directories and links with a relative path only", async () => {
    const root = await tempDir("manifest");
    await mkdir(path.join(root, "sub"));
    makeFifo(path.join(root, "sub/pipe"));
    const error = await takeManifest(root).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    expect(error).toMatchObject({ code: "unsupported_entry", relativePath: "sub/pipe" });
    expect((error as Error).message).not.toContain(root);
  });

  it("refuses a missing root or a root that is a file, without naming it", async () => {
    const root = await tempDir("manifest");
    await writeFile(path.join(root, "f"), "x");
    for (const bad of [path.join(root, "missing"), path.join(root, "f")]) {
      const error = await takeManifest(bad).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "manifest_root_invalid" });
      expect((error as Error).message).not.toContain(root);
    }
  });

  it("refuses a bad exclusion", async () => {
    const root = await tempDir("manifest");
    await expect(takeManifest(root, { exclude: ["../x"] })).rejects.toMatchObject({
      code: "invalid_exclude",
    });
    await expect(takeManifest(root, { exclude: ["/abs"] })).rejects.toMatchObject({
      code: "invalid_exclude",
    });
    await expect(takeManifest(root, { exclude: [""] })).rejects.toMatchObject({
      code: "invalid_exclude",
    });
  });
});
