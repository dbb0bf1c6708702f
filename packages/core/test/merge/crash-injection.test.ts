// Crash injection: the merge's filesystem seam fails at operation k and at every later one (a
// dead process does nothing more). For every k, each host path must hold its old or its new
// entry (never a torn file, never a missing one that should be old-or-new), and the next merge
// must remove the temporaries and complete.
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CopybackWriteError, mergeSnapshot, type FsOps } from "../../src/copyback/merge/index";
import {
  dir,
  file,
  link,
  materialize,
  noFlushFsOps,
  readTree,
  removeTempDirs,
  scenario,
  stateOf,
  type TreeSpec,
  type TreeState,
} from "./helpers";
import { sameNode } from "./reference-model";

afterEach(removeTempDirs);

class Crash extends Error {
  constructor() {
    super("injected crash");
  }
}

/** Counts every operation (flushes too, so crash points fall between them), and crashes at k. */
function crashingFsOps(crashAt: number, counter: { calls: number }): FsOps {
  const out = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(noFlushFsOps) as [
    string,
    (...args: unknown[]) => Promise<unknown>,
  ][]) {
    out[name] =
      name === "realpath"
        ? fn
        : async (...args: unknown[]) => {
            counter.calls++;
            if (counter.calls >= crashAt) throw new Crash();
            return fn(...args);
          };
  }
  return out as unknown as FsOps;
}

const isTemporary = (p: string) =>
  p.split("/").some((segment) => /^\.copyback-tmp-[0-9a-f]{16}$/.test(segment));

function withoutTemporaries(state: TreeState): TreeState {
  return Object.fromEntries(Object.entries(state).filter(([p]) => !isTemporary(p)));
}

async function crashEveryStep(
  base: TreeSpec,
  sandbox: TreeSpec,
  opts: { syncfsThreshold?: number; mayVanish?: string[]; consumeSnapshot?: boolean } = {},
) {
  const expected = stateOf({ ...sandbox, "host-only.txt": file("host") });
  const old = stateOf({ ...base, "host-only.txt": file("host") });
  const seams = { syncfsThreshold: opts.syncfsThreshold ?? 64 };

  // How many operations does a whole merge take?
  const full = { calls: 0 };
  const dry = await scenario(base, sandbox, { ...base, "host-only.txt": file("host") });
  await mergeSnapshot({
    target: dry.host,
    baseline: dry.baseline,
    snapshotDir: dry.snapshot,
    locks: dry.locks,
    consumeSnapshot: opts.consumeSnapshot,
    seams: { ...seams, fsOps: crashingFsOps(Infinity, full) },
  });
  expect(await readTree(dry.host)).toEqual(expected);
  expect(full.calls).toBeGreaterThan(10);

  const reruns = { completed: 0, conflicted: 0 };
  for (let k = 1; k <= full.calls; k++) {
    const s = await scenario(base, sandbox, { ...base, "host-only.txt": file("host") });
    const counter = { calls: 0 };
    const error = await mergeSnapshot({
      target: s.host,
      baseline: s.baseline,
      snapshotDir: s.snapshot,
      locks: s.locks,
      consumeSnapshot: opts.consumeSnapshot,
      seams: { ...seams, fsOps: crashingFsOps(k, counter) },
    }).catch((e: unknown) => e);
    expect(error, `k=${k}`).toBeInstanceOf(CopybackWriteError); // every operation is after the first host write

    const state = await readTree(s.host);
    for (const p of Object.keys(state).filter(isTemporary))
      expect(["file", "symlink", "dir"]).toContain(state[p]!.type);
    const visible = withoutTemporaries(state);
    for (const p of new Set([...Object.keys(old), ...Object.keys(expected)])) {
      const now = visible[p];
      const ok =
        sameNode(now, old[p]) ||
        sameNode(now, expected[p]) ||
        (now === undefined && (opts.mayVanish ?? []).includes(p));
      expect(
        ok,
        `k=${k}: ${p} is ${JSON.stringify(now)}, neither old ${JSON.stringify(old[p])} nor new ${JSON.stringify(expected[p])}`,
      ).toBe(true);
    }
    for (const p of Object.keys(visible))
      expect(p in old || p in expected, `k=${k}: unexpected ${p}`).toBe(true);

    // The next merge (same baseline, same snapshot) cleans up and completes. A consumed
    // snapshot is partly gone: that merge works from a fresh export of the same sandbox.
    let snapshotDir = s.snapshot;
    if (opts.consumeSnapshot) {
      snapshotDir = path.join(s.root, "re-export");
      await materialize(snapshotDir, sandbox);
    }
    const rerun = await mergeSnapshot({
      target: s.host,
      baseline: s.baseline,
      snapshotDir,
      locks: s.locks,
      consumeSnapshot: opts.consumeSnapshot,
      seams: { ...seams, fsOps: noFlushFsOps },
    }).catch((e: unknown) => e);
    if ((rerun as { kind?: string }).kind === "applied") {
      reruns.completed++;
      expect(await readTree(s.host), `k=${k}`).toEqual(expected);
    } else {
      // Only a path caught between directory and non-directory can be missing, and the next
      // merge then reports exactly that path as changed on both sides.
      reruns.conflicted++;
      expect(rerun, `k=${k}`).toMatchObject({ code: "merge_conflict" });
      const conflicts = (rerun as { conflicts: { path: string; kind: string }[] }).conflicts;
      expect(
        conflicts.every(
          (c) => (opts.mayVanish ?? []).includes(c.path) && c.kind === "both_changed",
        ),
        `k=${k}: ${JSON.stringify(conflicts)}`,
      ).toBe(true);
    }
  }
  return reruns;
}

const base: TreeSpec = {
  "a.txt": file("old a"),
  "same.txt": file("untouched"),
  "run.sh": file("#!/bin/sh\necho hi\n", 0o644),
  bin: dir(0o755),
  "bin/tool": file("tool"),
  "old.txt": file("to delete"),
  "gone/z.txt": file("z"),
  "gone/deeper/w.txt": file("w"),
  cur: link("a.txt"),
  "to-link.txt": file("becomes a link"),
  "to-file": link("same.txt"),
};
const sandbox: TreeSpec = {
  "a.txt": file("new a, longer than before"),
  "same.txt": file("untouched"),
  "run.sh": file("#!/bin/sh\necho hi\n", 0o755),
  bin: dir(0o750),
  "bin/tool": file("tool v2"),
  "new/x.txt": file("x"),
  "new/deep/y.txt": file("y", 0o600),
  cur: link("same.txt"),
  fresh: link("new/x.txt"),
  "to-link.txt": link("a.txt"),
  "to-file": file("was a link"),
};

describe("mergeSnapshot: crash injection", () => {
  it("a crash at any operation leaves every file old or new; the next merge cleans up and completes (per-file fsync)", async () => {
    const reruns = await crashEveryStep(base, sandbox);
    expect(reruns.conflicted).toBe(0);
  }, 120_000);

  it("the same with one syncfs as the durability barrier", async () => {
    const reruns = await crashEveryStep(base, sandbox, { syncfsThreshold: 0 });
    expect(reruns.conflicted).toBe(0);
  }, 120_000);

  it("the same when new files and whole new subtrees are moved out of a consumable snapshot", async () => {
    const reruns = await crashEveryStep(base, sandbox, { consumeSnapshot: true });
    expect(reruns.conflicted).toBe(0);
  }, 120_000);

  it("a directory replaced by a file (and back) is the one path that may be briefly missing", async () => {
    const b: TreeSpec = { "d/one.txt": file("1"), f: file("file"), "keep.txt": file("k") };
    const s: TreeSpec = {
      d: file("now a file"),
      "f/inner.txt": file("now a dir"),
      "keep.txt": file("k2"),
    };
    const reruns = await crashEveryStep(b, s, { mayVanish: ["d", "f"] });
    expect(reruns.completed).toBeGreaterThan(0);
  }, 120_000);
});
