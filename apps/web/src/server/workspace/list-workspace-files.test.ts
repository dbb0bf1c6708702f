import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listWorkspaceFiles } from "./list-workspace-files";

let dir: string;
let root: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "copyback-listing-"));
  root = path.join(dir, "workspace");
  await mkdir(root);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("listWorkspaceFiles", () => {
  it("lists files and directories in path order with relative paths and file sizes", async () => {
    await mkdir(path.join(root, "notes"));
    await writeFile(path.join(root, "notes", "builder.log"), "hello\n");
    await writeFile(path.join(root, "README.md"), "# readme");
    await mkdir(path.join(root, "src", "lib"), { recursive: true });
    await writeFile(path.join(root, "src", "lib", "a.ts"), "export {};");
    await writeFile(path.join(root, "src", "index.ts"), "");

    const listing = await listWorkspaceFiles(root);
    expect(listing).toEqual({
      kind: "listed",
      entries: [
        { path: "README.md", kind: "file", size: 8 },
        { path: "notes", kind: "directory", size: null },
        { path: "notes/builder.log", kind: "file", size: 6 },
        { path: "src", kind: "directory", size: null },
        { path: "src/index.ts", kind: "file", size: 0 },
        { path: "src/lib", kind: "directory", size: null },
        { path: "src/lib/a.ts", kind: "file", size: 10 },
      ],
      more: 0,
      moreIsLowerBound: false,
    });
  });

  it("shows a symlink as a link and never follows it, even to a directory outside the workspace", async () => {
    const outside = path.join(dir, "outside");
    await mkdir(outside);
    await writeFile(path.join(outside, "secret.txt"), "host secret");
    await symlink(outside, path.join(root, "escape"));
    await symlink("/etc/passwd", path.join(root, "passwd"));

    const listing = await listWorkspaceFiles(root);
    expect(listing).toMatchObject({
      kind: "listed",
      entries: [
        { path: "escape", kind: "symlink", size: null },
        { path: "passwd", kind: "symlink", size: null },
      ],
    });
    // Nothing of the link targets: no path below the link, no target text.
    expect(JSON.stringify(listing)).not.toContain("secret");
    expect(JSON.stringify(listing)).not.toContain("/etc");
  });

  it("refuses to list through a workspace root that is itself a symlink", async () => {
    const link = path.join(dir, "link-root");
    await symlink(root, link);
    expect(await listWorkspaceFiles(link)).toEqual({ kind: "unavailable", reason: "not_a_directory" });
  });

  it("omits excluded trees by name at any depth and by root-relative path", async () => {
    await mkdir(path.join(root, "node_modules", "pkg"), { recursive: true });
    await writeFile(path.join(root, "node_modules", "pkg", "index.js"), "");
    await mkdir(path.join(root, "app", "node_modules"), { recursive: true });
    await mkdir(path.join(root, "build", "cache"), { recursive: true });
    await writeFile(path.join(root, "build", "out.js"), "");
    await writeFile(path.join(root, "app", "main.ts"), "");

    const listing = await listWorkspaceFiles(root, { excludedPaths: ["node_modules", "build/cache"] });
    expect(listing.kind === "listed" && listing.entries.map((e) => e.path)).toEqual([
      "app",
      "app/main.ts",
      "build",
      "build/out.js",
    ]);
  });

  it("bounds the listing and counts what it left out", async () => {
    await mkdir(path.join(root, "many"));
    for (let i = 0; i < 30; i += 1) await writeFile(path.join(root, "many", `f${String(i).padStart(2, "0")}`), "x");

    const listing = await listWorkspaceFiles(root, { limit: 10 });
    expect(listing).toMatchObject({ kind: "listed", more: 21, moreIsLowerBound: false });
    if (listing.kind !== "listed") throw new Error("unreachable");
    expect(listing.entries).toHaveLength(10);
    expect(listing.entries[0]?.path).toBe("many");
    expect(listing.entries[9]?.path).toBe("many/f08");
  });

  it("stops scanning at the scan bound and says the count is a lower bound", async () => {
    for (let i = 0; i < 30; i += 1) await writeFile(path.join(root, `f${i}`), "");
    const listing = await listWorkspaceFiles(root, { limit: 5, scanLimit: 12 });
    expect(listing).toMatchObject({ kind: "listed", more: 7, moreIsLowerBound: true });
  });

  it("refuses to list with an exclusion it cannot apply", async () => {
    expect(await listWorkspaceFiles(root, { excludedPaths: ["../up"] })).toEqual({ kind: "unavailable", reason: "invalid_exclusions" });
  });

  it("reports a missing workspace or a file in its place as unavailable", async () => {
    expect(await listWorkspaceFiles(path.join(dir, "nope"))).toEqual({ kind: "unavailable", reason: "missing" });
    await writeFile(path.join(dir, "file"), "");
    expect(await listWorkspaceFiles(path.join(dir, "file"))).toEqual({ kind: "unavailable", reason: "not_a_directory" });
  });
});
