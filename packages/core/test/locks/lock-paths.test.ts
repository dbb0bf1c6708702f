import { chmodSync, mkdirSync, readdirSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalTarget, hashTarget } from "../../src/copyback/locks";
import { assertTargetOutsideLockRoot, ensureLockRoot } from "../../src/copyback/locks/lock-paths";
import { tempDir } from "./helpers";

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir("paths")));
afterEach(() => cleanup());

describe("canonical targets (R-LK-1)", () => {
  it("resolves symlinks and relative spellings to one realpath, so all writers meet on one hash", async () => {
    mkdirSync(path.join(dir, "real", "ws"), { recursive: true });
    symlinkSync(path.join(dir, "real"), path.join(dir, "alias"));
    const real = realpathSync(path.join(dir, "real", "ws"));
    expect(await canonicalTarget(path.join(dir, "alias", "ws"))).toBe(real);
    expect(await canonicalTarget(path.join(dir, "real", "ws", "..", "ws", "."))).toBe(real);
    expect(hashTarget(await canonicalTarget(path.join(dir, "alias", "ws")))).toBe(hashTarget(real));
  });

  it("a target that does not exist yet is its nearest existing parent's realpath plus the rest, equal to its realpath once created", async () => {
    mkdirSync(path.join(dir, "real"));
    symlinkSync(path.join(dir, "real"), path.join(dir, "alias"));
    const before = await canonicalTarget(path.join(dir, "alias", "new", "deeper"));
    expect(before).toBe(path.join(realpathSync(path.join(dir, "real")), "new", "deeper"));
    mkdirSync(path.join(dir, "real", "new", "deeper"), { recursive: true });
    expect(await canonicalTarget(path.join(dir, "alias", "new", "deeper"))).toBe(before);
  });

  it("refuses a dangling symlink on the way and a non-directory target", async () => {
    symlinkSync(path.join(dir, "nowhere"), path.join(dir, "dangling"));
    await expect(canonicalTarget(path.join(dir, "dangling", "ws"))).rejects.toMatchObject({ code: "target_dangling_symlink" });
    writeFileSync(path.join(dir, "file"), "x");
    await expect(canonicalTarget(path.join(dir, "file"))).rejects.toMatchObject({ code: "target_not_directory" });
    await expect(canonicalTarget(path.join(dir, "file", "below"))).rejects.toMatchObject({ code: "target_not_directory" });
  });

  it("R-LK-1: a target may not contain or lie inside the lock root", () => {
    const lockRoot = "/srv/inst/locks/directory-merge";
    expect(() => assertTargetOutsideLockRoot("/srv/inst", lockRoot)).toThrow(expect.objectContaining({ code: "target_overlaps_lock_root" }));
    expect(() => assertTargetOutsideLockRoot("/", lockRoot)).toThrow(expect.objectContaining({ code: "target_overlaps_lock_root" }));
    expect(() => assertTargetOutsideLockRoot(`${lockRoot}/x`, lockRoot)).toThrow(expect.objectContaining({ code: "target_overlaps_lock_root" }));
    expect(() => assertTargetOutsideLockRoot("/srv/inst/workspaces/a", lockRoot)).not.toThrow();
    expect(() => assertTargetOutsideLockRoot("/srv/inst/locks/directory-merge-other", lockRoot)).not.toThrow();
  });
});

describe("lock root", () => {
  it("is created private (0700) even under a permissive umask", () => {
    const previous = process.umask(0o000);
    try {
      const root = ensureLockRoot(path.join(dir, "inst"));
      expect(statSync(root).mode & 0o777).toBe(0o700);
      expect(statSync(path.dirname(root)).mode & 0o777).toBe(0o700);
    } finally {
      process.umask(previous);
    }
  });

  it("refuses a symlinked locks/ or directory-merge/, a non-directory, and a group-writable one, creating nothing", () => {
    const elsewhere = path.join(dir, "elsewhere");
    mkdirSync(elsewhere, { mode: 0o700 });

    const a = path.join(dir, "a");
    mkdirSync(a);
    symlinkSync(elsewhere, path.join(a, "locks"));
    expect(() => ensureLockRoot(a)).toThrow(expect.objectContaining({ code: "lock_root_symlink" }));

    const b = path.join(dir, "b");
    mkdirSync(path.join(b, "locks"), { recursive: true, mode: 0o700 });
    chmodSync(path.join(b, "locks"), 0o700);
    symlinkSync(elsewhere, path.join(b, "locks", "directory-merge"));
    expect(() => ensureLockRoot(b)).toThrow(expect.objectContaining({ code: "lock_root_symlink" }));

    const c = path.join(dir, "c");
    mkdirSync(path.join(c, "locks"), { recursive: true });
    chmodSync(path.join(c, "locks"), 0o700);
    writeFileSync(path.join(c, "locks", "directory-merge"), "");
    expect(() => ensureLockRoot(c)).toThrow(expect.objectContaining({ code: "lock_root_not_directory" }));

    const d = path.join(dir, "d");
    mkdirSync(path.join(d, "locks"), { recursive: true });
    chmodSync(path.join(d, "locks"), 0o777);
    expect(() => ensureLockRoot(d)).toThrow(expect.objectContaining({ code: "lock_root_insecure" }));

    expect(readdirSync(elsewhere)).toEqual([]);
  });
});
