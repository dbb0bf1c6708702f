import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listLocks } from "../../src/copyback/locks/index";
import {
  MergeConflictError,
  classifyCopybackFailure,
  mergeSnapshot,
  realFsOps,
  type FsOps,
} from "../../src/copyback/merge/index";
import {
  dir,
  file,
  link,
  makeFifo,
  readTree,
  removeTempDirs,
  scenario,
  stateOf,
  type TreeSpec,
} from "./helpers";

afterEach(removeTempDirs);

async function merge(
  base: TreeSpec,
  sandbox: TreeSpec,
  host: TreeSpec,
  extra: { exclude?: string[]; fsOps?: FsOps; consumeSnapshot?: boolean } = {},
) {
  const s = await scenario(base, sandbox, host, extra.exclude);
  const locks = s.locks; // the real directory-merge locks
  const run = () =>
    mergeSnapshot({
      target: s.host,
      baseline: s.baseline,
      snapshotDir: s.snapshot,
      locks,
      exclude: extra.exclude,
      consumeSnapshot: extra.consumeSnapshot,
      seams: extra.fsOps ? { fsOps: extra.fsOps } : undefined,
    });
  return { s, locks, run };
}

async function expectConflict(
  base: TreeSpec,
  sandbox: TreeSpec,
  host: TreeSpec,
  kinds: string[],
  exclude?: string[],
) {
  const { s, run } = await merge(base, sandbox, host, { exclude });
  const before = await readTree(s.host);
  const outsideBefore = await readTree(s.outside);
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MergeConflictError);
  const conflict = error as MergeConflictError;
  expect(conflict.code).toBe("merge_conflict");
  expect(conflict.conflicts.map((c) => `${c.kind}:${c.path}`)).toEqual(kinds);
  expect(conflict.message).not.toContain(s.root); // R-UA-4: no host path in the message
  expect(JSON.stringify(conflict.conflicts)).not.toContain(s.root);
  expect(classifyCopybackFailure(conflict)).toEqual({ retryable: false, reason: "merge_conflict" });
  expect(await readTree(s.host)).toEqual(before); // nothing written
  expect(await readTree(s.outside)).toEqual(outsideBefore);
  return conflict;
}

describe("mergeSnapshot: the merge examples", () => {
  it("creates, edits and deletes files and keeps unrelated host edits", async () => {
    const base = {
      "a.txt": file("a"),
      "b.txt": file("b"),
      "src/c.ts": file("c"),
      "src/old.ts": file("old"),
    };
    const sandbox = {
      "a.txt": file("a2"),
      "b.txt": file("b"),
      "src/c.ts": file("c"),
      "src/new.ts": file("new"),
      "docs/readme.md": file("doc"),
    };
    const host = { ...base, "b.txt": file("b-host"), "host-only.txt": file("mine") };
    const { s, run } = await merge(base, sandbox, host);
    const outcome = await run();
    expect(outcome).toEqual({
      kind: "applied",
      written: ["a.txt", "docs", "docs/readme.md", "src/new.ts"],
      deleted: ["src/old.ts"],
    });
    expect(await readTree(s.host)).toEqual(
      stateOf({
        "a.txt": file("a2"),
        "b.txt": file("b-host"),
        "host-only.txt": file("mine"),
        "src/c.ts": file("c"),
        "src/new.ts": file("new"),
        "docs/readme.md": file("doc"),
      }),
    );
    expect(
      (await readdir(s.host, { recursive: true })).filter((n) => n.includes(".copyback-tmp-")),
    ).toEqual([]);
  });

  it("applies file and directory mode changes (chmod)", async () => {
    const base = {
      bin: dir(0o755),
      "bin/run.sh": file("#!/bin/sh", 0o644),
      "secret.txt": file("s", 0o644),
    };
    const sandbox = {
      bin: dir(0o750),
      "bin/run.sh": file("#!/bin/sh", 0o755),
      "secret.txt": file("s", 0o600),
    };
    const { s, run } = await merge(base, sandbox, base);
    const outcome = await run();
    expect(outcome).toEqual({
      kind: "applied",
      written: ["bin", "bin/run.sh", "secret.txt"],
      deleted: [],
    });
    expect(await readTree(s.host)).toEqual(stateOf(sandbox));
  });

  it("creates a new read-only directory with its contents, closing it last", async () => {
    const sandbox = {
      ro: dir(0o555),
      "ro/inner": dir(0o500),
      "ro/inner/f.txt": file("f", 0o444),
      "ro/g.txt": file("g"),
    };
    const { s, run } = await merge({}, sandbox, {});
    await run();
    expect(await readTree(s.host)).toEqual(stateOf(sandbox));
  });

  it("creates and retargets symlinks exactly, never following them", async () => {
    const base = { "lib/a.js": file("a"), "lib/b.js": file("b"), current: link("lib/a.js") };
    const sandbox = {
      "lib/a.js": file("a"),
      "lib/b.js": file("b"),
      current: link("lib/b.js"),
      fresh: link("../outside/canary"),
      dangling: link("does/not/exist"),
    };
    const { s, run } = await merge(base, sandbox, base);
    await run();
    expect(await readTree(s.host)).toEqual(stateOf(sandbox));
    expect(await readFile(path.join(s.outside, "canary"), "utf8")).toBe("outside");
  });

  it("replaces a directory by a file and a file by a directory", async () => {
    const base = {
      "x/one.txt": file("1"),
      "x/sub/two.txt": file("2"),
      y: file("was a file"),
      z: link("x"),
    };
    const sandbox = {
      x: file("now a file"),
      "y/inner.txt": file("now a dir"),
      "z/real.txt": file("link became a dir"),
    };
    const { s, run } = await merge(base, sandbox, base);
    const outcome = await run();
    expect(outcome).toEqual({
      kind: "applied",
      written: ["x", "y", "y/inner.txt", "z", "z/real.txt"],
      deleted: ["x/one.txt", "x/sub", "x/sub/two.txt"],
    });
    expect(await readTree(s.host)).toEqual(stateOf(sandbox));
  });

  it("an identical change on both sides is not a conflict", async () => {
    const base = { "a.txt": file("old") };
    const both = { "a.txt": file("same new"), "n/new.txt": file("same") };
    const { s, run } = await merge(base, both, both);
    expect(await run()).toEqual({ kind: "applied", written: [], deleted: [] });
    expect(await readTree(s.host)).toEqual(stateOf(both));
  });

  it("conflict: the host and the sandbox both changed a file; nothing is written", async () => {
    const base = { "a.txt": file("base"), "b.txt": file("b") };
    const conflict = await expectConflict(
      base,
      { "a.txt": file("sandbox"), "b.txt": file("b2"), "c.txt": file("new") },
      { "a.txt": file("host"), "b.txt": file("b") },
      ["both_changed:a.txt"],
    );
    expect(conflict.conflicts[0]?.detail).toContain("contents changed");
  });

  it("conflict: the sandbox deleted a file the host edited, and chmod against an edit", async () => {
    const base = { "a.txt": file("base"), "m.txt": file("m", 0o644) };
    await expectConflict(
      base,
      { "m.txt": file("m", 0o600) },
      { "a.txt": file("host edit"), "m.txt": file("m2", 0o644) },
      ["both_changed:a.txt", "both_changed:m.txt"],
    );
  });

  it("conflict: the host created a file inside a directory the sandbox deleted", async () => {
    const base = { "pkg/index.js": file("i"), "keep.txt": file("k") };
    await expectConflict(
      base,
      { "keep.txt": file("k2") },
      { ...base, "pkg/added-on-host.js": file("host") },
      ["host_entry_in_removed_directory:pkg/added-on-host.js"],
    );
  });

  it("conflict: the host created entries inside a directory the sandbox replaced by a link (reported once per subtree)", async () => {
    const base = { "pkg/index.js": file("i") };
    await expectConflict(
      base,
      { pkg: link("elsewhere") },
      { ...base, "pkg/new/a.js": file("a"), "pkg/new/b.js": file("b") },
      ["host_entry_in_removed_directory:pkg/new"],
    );
  });

  it("conflict: the sandbox writes below a path that is a symlink on the host", async () => {
    const base = { "data/keep.txt": file("k"), other: dir() };
    const host = { other: dir(), data: link("../outside") };
    const sandbox = { "data/keep.txt": file("k"), "data/new.txt": file("escape?"), other: dir() };
    // "data" itself: the host replaced it (dir -> link) and the sandbox left it and data/keep.txt
    // alone, so those keep their host state; the new file would land in the link's target.
    await expectConflict(base, sandbox, host, ["write_below_host_symlink:data/new.txt"]);
  });

  it("conflict: the sandbox writes into a directory the host removed", async () => {
    const base = { "gone/a.txt": file("a") };
    await expectConflict(base, { "gone/a.txt": file("a"), "gone/b.txt": file("b") }, {}, [
      "parent_changed_on_host:gone/b.txt",
    ]);
  });

  it("excluded trees are preserved on the host and never deleted", async () => {
    const exclude = ["node_modules", ".git/objects"];
    const base = {
      "app/index.js": file("i"),
      "app/node_modules/dep.js": file("dep"),
      ".git/HEAD": file("ref"),
      ".git/objects/ab": file("obj"),
      "lib/x.js": file("x"),
    };
    const sandbox = {
      ".git/HEAD": file("ref2"),
      "node_modules/huge.js": file("ignored"),
      "lib/x.js": file("x"),
    }; // app/ deleted wholesale
    const host = {
      ...base,
      "app/node_modules/added.js": file("host dep"),
      ".git/objects/cd": file("obj2"),
    };
    const { s, run } = await merge(base, sandbox, host, { exclude });
    const outcome = await run();
    expect(outcome).toEqual({ kind: "applied", written: [".git/HEAD"], deleted: ["app/index.js"] });
    expect(await readTree(s.host)).toEqual(
      stateOf({
        "app/node_modules/dep.js": file("dep"),
        "app/node_modules/added.js": file("host dep"),
        ".git/HEAD": file("ref2"),
        ".git/objects/ab": file("obj"),
        ".git/objects/cd": file("obj2"),
        "lib/x.js": file("x"),
      }),
    );
  });

  it("conflict: a directory replaced by a file while it holds excluded host entries", async () => {
    const base = { "app/index.js": file("i"), "app/node_modules/dep.js": file("dep") };
    await expectConflict(
      base,
      { app: file("now a file") },
      base,
      ["excluded_entry_in_replaced_directory:app"],
      ["node_modules"],
    );
  });

  it("moves files out of a consumable snapshot with the same result", async () => {
    const base = { "a.txt": file("a"), "d/b.txt": file("b") };
    const sandbox = {
      "a.txt": file("a2", 0o600),
      "d/b.txt": file("b"),
      "d/c.txt": file("c", 0o755),
    };
    const { s, run } = await merge(base, sandbox, base, { consumeSnapshot: true });
    await run();
    expect(await readTree(s.host)).toEqual(stateOf(sandbox));
    expect(await readdir(path.join(s.snapshot, "d"))).toEqual(["b.txt"]); // moved, not copied
  });

  it("moves whole new subtrees out of a consumable snapshot, but never its excluded entries", async () => {
    const base = { "keep.txt": file("k") };
    const sandbox = {
      "keep.txt": file("k"),
      "pkg/index.js": file("i", 0o755),
      "pkg/lib/util.js": file("u"),
      "pkg/lib/link": link("util.js"),
      "pkg/empty": dir(0o700),
      "app/src/main.ts": file("m"),
      "app/node_modules/dep.js": file("excluded: must not reach the host"),
    };
    const { s, run } = await merge(base, sandbox, base, {
      consumeSnapshot: true,
      exclude: ["node_modules"],
    });
    const outcome = await run();
    expect(outcome).toMatchObject({ kind: "applied", deleted: [] });
    const { "app/node_modules/dep.js": _excluded, ...expected } = sandbox;
    expect(await readTree(s.host)).toEqual(stateOf(expected));
    // pkg moved as one subtree; app (which holds an excluded entry) was built entry by entry.
    expect((await readdir(s.snapshot)).sort()).toEqual(["app", "keep.txt"]);
    expect(await readdir(path.join(s.snapshot, "app"), { recursive: true })).toEqual(
      expect.arrayContaining(["node_modules", "node_modules/dep.js"]),
    );
  });

  it("a supplied snapshot manifest is used instead of reading the snapshot again", async () => {
    const base = { "a.txt": file("a") };
    const sandbox = { "a.txt": file("a2"), "n/b.txt": file("b") };
    const { s } = await merge(base, sandbox, base);
    const { takeManifest } = await import("../../src/copyback/manifest/index");
    const snapshotManifest = await takeManifest(s.snapshot);
    const outcome = await mergeSnapshot({
      target: s.host,
      baseline: s.baseline,
      snapshotDir: s.snapshot,
      snapshotManifest,
      locks: s.locks,
      consumeSnapshot: true,
    });
    expect(outcome).toEqual({ kind: "applied", written: ["a.txt", "n", "n/b.txt"], deleted: [] });
    expect(await readTree(s.host)).toEqual(stateOf(sandbox));
    // Unchanged per the supplied manifest: the snapshot directory is not even looked at.
    const again = await mergeSnapshot({
      target: s.host,
      baseline: snapshotManifest,
      snapshotDir: s.snapshot,
      snapshotManifest,
      locks: s.locks,
    });
    expect(again).toEqual({ kind: "unchanged" });
  });

  it("many files: one syncfs as data barrier, or per-file fsync when syncfs is unavailable", async () => {
    const base: TreeSpec = {};
    const sandbox: TreeSpec = {};
    for (let i = 0; i < 20; i++) sandbox[`d${i % 3}/f${i}.txt`] = file(`content ${i}`);
    for (const syncfsWorks of [true, false]) {
      const { calls, fsOps } = recordingSyncs(syncfsWorks);
      const s = await scenario(base, sandbox, {});
      await mergeSnapshot({
        target: s.host,
        baseline: s.baseline,
        snapshotDir: s.snapshot,
        locks: s.locks,
        seams: { fsOps, syncfsThreshold: 2 },
      });
      expect(await readTree(s.host)).toEqual(stateOf(sandbox));
      const count = (name: string) => calls.filter((c) => c.split(" ")[0] === name).length;
      if (syncfsWorks) {
        expect(count("syncfs")).toBe(2); // data barrier and name barrier (4 dirty dirs > 2)
        expect(count("fsyncFile")).toBe(0);
      } else {
        expect(count("fsyncFile")).toBe(20);
        expect(count("fsyncDir")).toBe(4); // root and d0..d2
      }
    }
  });

  it("a consumed snapshot's moved subtrees: every moved file is fsynced when syncfs is unavailable", async () => {
    const sandbox: TreeSpec = {};
    for (let i = 0; i < 20; i++) sandbox[`d${i % 3}/f${i}.txt`] = file(`content ${i}`);
    for (const syncfsWorks of [true, false]) {
      const { calls, fsOps } = recordingSyncs(syncfsWorks);
      const s = await scenario({}, sandbox, {});
      await mergeSnapshot({
        target: s.host,
        baseline: s.baseline,
        snapshotDir: s.snapshot,
        locks: s.locks,
        consumeSnapshot: true,
        seams: { fsOps, syncfsThreshold: 2 },
      });
      expect(await readTree(s.host)).toEqual(stateOf(sandbox));
      const synced = calls.filter((c) => c.startsWith("fsyncFile ")).map((c) => `fsyncFile ${path.basename(c.slice(10))}`).sort();
      expect(synced).toEqual(syncfsWorks ? [] : Object.keys(sandbox).map((k) => `fsyncFile ${path.basename(k)}`).sort());
    }
  });

  it("removes stray temporaries of an interrupted merge, and only those", async () => {
    const base = { "a.txt": file("a"), "d/b.txt": file("b") };
    const host = {
      ...base,
      "d/.copyback-tmp-0123456789abcdef": file("half-written"),
      ".copyback-tmp-fedcba9876543210": link("x"),
      ".copyback-tmp-notours": file("user file"),
      "d/.copyback-tmp-00000000000000aa": dir(0o700),
      ".copyback-tmp-00000000000000bb/user.txt": file(
        "not ours: a temporary directory is never written into",
      ),
      "node_modules/.copyback-tmp-0123456789abcdef": file("inside an exclusion"),
    };
    const { s, run } = await merge(base, { ...base, "a.txt": file("a2") }, host, {
      exclude: ["node_modules"],
    });
    await run();
    expect(await readTree(s.host)).toEqual(
      stateOf({
        "a.txt": file("a2"),
        "d/b.txt": file("b"),
        ".copyback-tmp-notours": file("user file"),
        ".copyback-tmp-00000000000000bb/user.txt": file(
          "not ours: a temporary directory is never written into",
        ),
        "node_modules/.copyback-tmp-0123456789abcdef": file("inside an exclusion"),
      }),
    );
  });
});

describe("mergeSnapshot: bad input changes nothing", () => {
  it("refuses a malformed baseline before taking the lock", async () => {
    const { s, locks } = await merge(
      { "a.txt": file("a") },
      { "a.txt": file("b") },
      { "a.txt": file("a") },
    );
    const before = await readTree(s.host);
    const bad = {
      version: 1,
      entries: [{ path: "../escape", type: "file", mode: 0o644, sha256: "0".repeat(64) }],
    };
    await expect(
      mergeSnapshot({ target: s.host, baseline: bad as never, snapshotDir: s.snapshot, locks }),
    ).rejects.toMatchObject({ code: "invalid_manifest" });
    expect((await listLocks(s.instanceRoot)).locks).toEqual([]); // the lock was never taken
    expect(await readTree(s.host)).toEqual(before);
  });

  it("refuses a missing target, a missing snapshot, nested directories and a bad exclusion", async () => {
    const { s, locks } = await merge({}, { "a.txt": file("a") }, {});
    const base = { target: s.host, baseline: s.baseline, snapshotDir: s.snapshot, locks };
    await expect(
      mergeSnapshot({ ...base, target: path.join(s.root, "nope") }),
    ).rejects.toMatchObject({ code: "merge_target_invalid" });
    await expect(
      mergeSnapshot({ ...base, snapshotDir: path.join(s.root, "nope") }),
    ).rejects.toMatchObject({ code: "merge_snapshot_invalid" });
    await expect(mergeSnapshot({ ...base, target: path.join(s.host, "..") })).rejects.toMatchObject(
      { code: "merge_snapshot_invalid" },
    );
    await expect(mergeSnapshot({ ...base, exclude: ["../up"] })).rejects.toMatchObject({
      code: "invalid_exclude",
    });
    const error = await mergeSnapshot({ ...base, target: path.join(s.root, "nope") }).catch(
      (e: Error) => e,
    );
    expect((error as Error).message).not.toContain(s.root);
    expect((await listLocks(s.instanceRoot)).locks).toEqual([]); // the lock was never taken
    expect(await readTree(s.host)).toEqual({});
  });
});

describe("mergeSnapshot: failures and R-RR-1 tagging", () => {
  it("R-RR-1: a failure once host writes began is a CopybackWriteError that is never retried", async () => {
    const fsOps: FsOps = {
      ...realFsOps,
      rename: async () => {
        throw Object.assign(new Error("ECONNRESET-like transient"), {
          code: "ECONNRESET",
          syscall: "rename",
        });
      },
    };
    const { s, run } = await merge(
      { "a.txt": file("a") },
      { "a.txt": file("b") },
      { "a.txt": file("a") },
      { fsOps },
    );
    const error = await run().catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "copyback_write_failed",
      hostWritesBegan: true,
      causeCode: "ECONNRESET",
    });
    expect(classifyCopybackFailure(error)).toEqual({
      retryable: false,
      reason: "after_host_writes",
    });
    expect((await readTree(s.host))["a.txt"]).toEqual({ type: "file", mode: 0o644, content: "a" }); // old, not torn
  });

  it("R-RR-1: a failure before any host write keeps its own code (so it can be classified)", async () => {
    const { s, locks } = await merge(
      { "a.txt": file("a") },
      { "a.txt": file("b") },
      { "a.txt": file("a") },
    );
    const error = await mergeSnapshot({
      target: s.host,
      baseline: s.baseline,
      snapshotDir: s.snapshot,
      locks,
      seams: {
        probeHost: async () => {
          throw Object.assign(new Error(`EACCES: permission denied, lstat '${s.host}/a.txt'`), {
            code: "EACCES",
            syscall: "lstat",
            path: path.join(s.host, "a.txt"),
          });
        },
      },
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "EACCES", relativePath: "a.txt" });
    expect((error as Error).message).not.toContain(s.root);
    expect(error).not.toHaveProperty("hostWritesBegan");
    expect(classifyCopybackFailure(error)).toEqual({
      retryable: false,
      reason: "permission_denied",
    });
  });

  it("a failing publish hook after writes is a CopybackWriteError; the files stay written", async () => {
    const { s } = await merge(
      { "a.txt": file("a") },
      { "a.txt": file("b") },
      { "a.txt": file("a") },
    );
    const error = await mergeSnapshot({
      target: s.host,
      baseline: s.baseline,
      snapshotDir: s.snapshot,
      locks: s.locks,
      hooks: {
        publish: async () => {
          throw new Error("database down");
        },
      },
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "copyback_write_failed", hostWritesBegan: true });
    expect(await readFile(path.join(s.host, "a.txt"), "utf8")).toBe("b");
  });

  it("a host FIFO at a changed path is refused with a clear error before writing", async () => {
    const { s, run } = await merge(
      { "a.txt": file("a") },
      { "a.txt": file("b"), p: file("x") },
      { "a.txt": file("a") },
    );
    makeFifo(path.join(s.host, "p"));
    await expect(run()).rejects.toMatchObject({ code: "unsupported_entry", relativePath: "p" });
    expect(await readFile(path.join(s.host, "a.txt"), "utf8")).toBe("a");
  });
});

/**
 * Real filesystem operations that record each barrier call ("syncfs", "fsyncFile PATH",
 * "fsyncDir PATH"); syncfs reports itself unavailable unless `syncfsWorks`.
 */
function recordingSyncs(syncfsWorks: boolean): { calls: string[]; fsOps: FsOps } {
  const calls: string[] = [];
  const fsOps: FsOps = {
    ...realFsOps,
    syncFilesystem: async (p) => {
      calls.push("syncfs");
      return syncfsWorks ? realFsOps.syncFilesystem(p) : false;
    },
    fsyncFile: async (p) => {
      calls.push(`fsyncFile ${p}`);
      return realFsOps.fsyncFile(p);
    },
    fsyncDir: async (p) => {
      calls.push(`fsyncDir ${p}`);
      return realFsOps.fsyncDir(p);
    },
  };
  return { calls, fsOps };
}
