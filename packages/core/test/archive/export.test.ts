import { link, mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { list } from "tar";
import {
  WorkspaceExportError,
  exportWorkspaceArchive,
  validateArchive,
} from "../../src/copyback/archive/index";
import { describeTree, tempDir, writeStream } from "./helpers";

let tmp: { path: string; cleanup(): Promise<void> };
let ws: string;

beforeEach(async () => {
  tmp = await tempDir("export");
  ws = join(tmp.path, "ws");
  await mkdir(ws);
});
afterEach(async () => tmp.cleanup());

async function listing(file: string): Promise<{ path: string; type: string; linkpath?: string }[]> {
  const out: { path: string; type: string; linkpath?: string }[] = [];
  await list({
    file,
    onReadEntry: (e) =>
      void out.push({
        path: e.path,
        type: e.type,
        ...(e.linkpath ? { linkpath: e.linkpath } : {}),
      }),
  });
  return out;
}

describe("exportWorkspaceArchive", () => {
  it("omits excluded trees (bare names at any depth, root-relative paths) and nothing else", async () => {
    await mkdir(join(ws, "node_modules/dep"), { recursive: true });
    await mkdir(join(ws, "packages/app/node_modules/x"), { recursive: true });
    await mkdir(join(ws, ".git/objects/ab"), { recursive: true });
    await mkdir(join(ws, "src/.git"), { recursive: true });
    await writeFile(join(ws, "node_modules/dep/index.js"), "x");
    await writeFile(join(ws, "packages/app/node_modules/x/y.js"), "x");
    await writeFile(join(ws, "packages/app/main.ts"), "x");
    await writeFile(join(ws, ".git/objects/ab/cd"), "x");
    await writeFile(join(ws, ".git/HEAD"), "x");
    await writeFile(join(ws, "src/.git/objects"), "not the excluded path");
    const archive = join(tmp.path, "a.tar");
    await writeStream(
      exportWorkspaceArchive(ws, { exclude: ["node_modules", ".git/objects"] }),
      archive,
    );
    const paths = (await listing(archive)).map((e) => e.path);
    expect(paths).toEqual([
      ".git/",
      ".git/HEAD",
      "packages/",
      "packages/app/",
      "packages/app/main.ts",
      "src/",
      "src/.git/",
      "src/.git/objects",
    ]);
  });

  it("stores symlinks as symlinks and never follows them (a link to a directory outside exports as a link)", async () => {
    const outside = join(tmp.path, "outside");
    await mkdir(outside);
    await writeFile(join(outside, "secret"), "do not export me");
    await symlink(outside, join(ws, "out-dir"));
    await symlink("../outside/secret", join(ws, "out-file"));
    const archive = join(tmp.path, "a.tar");
    await writeStream(exportWorkspaceArchive(ws), archive);
    expect(await listing(archive)).toEqual([
      { path: "out-dir", type: "SymbolicLink", linkpath: outside },
      { path: "out-file", type: "SymbolicLink", linkpath: "../outside/secret" },
    ]);
  });

  it("R-UA-2: stores a second path of a hard-linked file as ordinary bytes by default (a safe archive); a hard-link entry only when asked, and validation rejects that", async () => {
    await writeFile(join(ws, "a"), "shared bytes");
    await link(join(ws, "a"), join(ws, "b"));
    const linked = join(tmp.path, "linked.tar");
    await writeStream(exportWorkspaceArchive(ws, { hardLinks: "link" }), linked);
    expect(await listing(linked)).toEqual([
      { path: "a", type: "File" },
      { path: "b", type: "Link", linkpath: "a" },
    ]);
    const result = await validateArchive(linked);
    expect(result.kind === "rejected" && result.violations.map((v) => v.code)).toEqual([
      "hard_link",
    ]);

    const copied = join(tmp.path, "copied.tar");
    await writeStream(exportWorkspaceArchive(ws), copied);
    expect(await listing(copied)).toEqual([
      { path: "a", type: "File" },
      { path: "b", type: "File" },
    ]);
    expect(await validateArchive(copied)).toMatchObject({ kind: "safe", totalBytes: 24 });
  });

  it("refuses a bad exclusion pattern up front", () => {
    expect(() => exportWorkspaceArchive(ws, { exclude: ["../up"] })).toThrow(/exclusion/i);
    expect(() => exportWorkspaceArchive(ws, { exclude: ["/abs"] })).toThrow(/exclusion/i);
  });

  it("fails the stream with a coded error and no host path when the workspace is missing", async () => {
    const missing = join(tmp.path, "does-not-exist");
    const error = await writeStream(exportWorkspaceArchive(missing), join(tmp.path, "x.tar")).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WorkspaceExportError);
    expect((error as WorkspaceExportError).code).toBe("workspace_export_failed");
    expect((error as Error).message).not.toContain(tmp.path);
  });

  it("refuses a workspace root that is a symbolic link", async () => {
    const linkRoot = join(tmp.path, "link-root");
    await symlink(ws, linkRoot);
    const error = await writeStream(
      exportWorkspaceArchive(linkRoot),
      join(tmp.path, "x.tar"),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkspaceExportError);
  });

  it("leaves the workspace untouched", async () => {
    await mkdir(join(ws, "d"));
    await writeFile(join(ws, "d/f"), "x");
    await symlink("d/f", join(ws, "l"));
    const before = await describeTree(ws, { mtimes: true });
    await writeStream(exportWorkspaceArchive(ws), join(tmp.path, "a.tar"));
    expect(await describeTree(ws, { mtimes: true })).toEqual(before);
  });
});

// The size hint a local export gives its receive's spool.
describe("workspaceBytesAtLeast", () => {
  it("counts a header per entry and the file sizes, leaves exclusions out, and stops once past the bound", async () => {
    const { workspaceBytesAtLeast } = await import("../../src/copyback/archive/workspace-walk");
    const { compileExclude } = await import("../../src/copyback/manifest/exclude");
    await mkdir(join(ws, "d"));
    await writeFile(join(ws, "d", "a.bin"), Buffer.alloc(1000));
    await writeFile(join(ws, "b.bin"), Buffer.alloc(3000));
    await mkdir(join(ws, "node_modules"));
    await writeFile(join(ws, "node_modules", "big.bin"), Buffer.alloc(100_000));
    // b.bin, d, d/a.bin: three headers and 4000 bytes.
    expect(await workspaceBytesAtLeast(ws, compileExclude(["node_modules"]), 1_000_000)).toBe(3 * 512 + 4000);
    expect(await workspaceBytesAtLeast(ws, compileExclude([]), 1_000_000)).toBe(5 * 512 + 104_000);
    // Past the bound after b.bin (the first entry in order): the rest is not counted.
    expect(await workspaceBytesAtLeast(ws, compileExclude([]), 1000)).toBe(512 + 3000);
    expect(await workspaceBytesAtLeast(join(ws, "missing"), compileExclude([]), 1000)).toBe(0);
  });
});
