// Property-based tests of the three-way merge (fast-check 4): random baseline, sandbox and host
// trees over a small alphabet of paths, real directories, the real merge, and the reference
// model in reference-model.ts as the oracle.
import { createHash } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { compileExclude, takeManifest } from "../../src/copyback/manifest/index";
import { MergeConflictError, mergeSnapshot } from "../../src/copyback/merge/index";
import {
  FakeLocks,
  file,
  materialize,
  noFlushFsOps,
  readTree,
  removeTempDirs,
  tempDir,
  type TreeSpec,
  type TreeState,
} from "./helpers";
import { expectedMerge, sortTree, type ModelNode } from "./reference-model";

afterEach(removeTempDirs);

const EXCLUDE = ["nm"];
const isExcluded = compileExclude(EXCLUDE);
// Names "a" and "b" to depth 3, plus an excluded "nm" at two places, each with one child.
const NAMES = ["a", "b"];
const UNIVERSE: string[] = [];
for (const x of NAMES) {
  UNIVERSE.push(x);
  for (const y of NAMES) {
    UNIVERSE.push(`${x}/${y}`);
    for (const z of NAMES) UNIVERSE.push(`${x}/${y}/${z}`);
  }
}
UNIVERSE.push("nm", "nm/f", "a/nm", "a/nm/f");

const nodeArb: fc.Arbitrary<ModelNode | null> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(null) },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant("file" as const),
      mode: fc.constantFrom(0o644, 0o600, 0o755),
      content: fc.constantFrom("", "x", "y", "zz"),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant("dir" as const),
      mode: fc.constantFrom(0o755, 0o700),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("symlink" as const),
      target: fc.constantFrom("a", "b/a", "../outside", "nowhere", "../../outside/canary"),
    }),
  },
);
const variantArb: fc.Arbitrary<ModelNode | null | "same"> = fc.oneof(
  { weight: 3, arbitrary: fc.constant("same" as const) },
  { weight: 1, arbitrary: nodeArb },
);

/** Drops entries whose parent is not a directory, so every tree is one a filesystem can hold. */
function toTree(choices: Map<string, ModelNode | null>): TreeState {
  const tree: TreeState = {};
  for (const p of UNIVERSE) {
    const node = choices.get(p);
    if (node === null || node === undefined) continue;
    const parent = p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "";
    if (parent !== "" && tree[parent]?.type !== "dir") continue;
    tree[p] = node;
  }
  return tree;
}

const treesArb = fc
  .array(fc.tuple(nodeArb, variantArb, variantArb), {
    minLength: UNIVERSE.length,
    maxLength: UNIVERSE.length,
  })
  .map((rows) => {
    const b = new Map<string, ModelNode | null>();
    const s = new Map<string, ModelNode | null>();
    const h = new Map<string, ModelNode | null>();
    rows.forEach(([base, sandbox, host], i) => {
      const p = UNIVERSE[i]!;
      b.set(p, base);
      s.set(p, sandbox === "same" ? base : sandbox);
      h.set(p, host === "same" ? base : host);
    });
    return { base: toTree(b), sandbox: toTree(s), host: toTree(h) };
  });

function specOf(tree: TreeState): TreeSpec {
  const spec: TreeSpec = {};
  for (const [p, node] of Object.entries(tree)) {
    spec[p] =
      node.type === "file"
        ? { type: "file", content: node.content, mode: node.mode }
        : node.type === "dir"
          ? { type: "dir", mode: node.mode }
          : { type: "symlink", target: node.target };
  }
  return spec;
}

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

describe("mergeSnapshot: property-based three-way merge", () => {
  it("equals the specified three-way outcome, or is a conflict with the host byte-identical", async () => {
    // The lock is not the subject here (the example and R-LK-6 tests use the real one); a fake
    // keeps hundreds of runs from creating hundreds of SQLite lock files.
    const locks = new FakeLocks();
    const outcomes = { conflict: 0, unchanged: 0, applied: 0 };
    await fc.assert(
      fc.asyncProperty(treesArb, fc.boolean(), async ({ base, sandbox, host }, consumeSnapshot) => {
        const root = await tempDir("prop");
        try {
          await materialize(path.join(root, "baseline"), specOf(base));
          await materialize(path.join(root, "snapshot"), specOf(sandbox));
          await materialize(path.join(root, "host"), specOf(host));
          await materialize(path.join(root, "outside"), { canary: file("outside") });
          const baseline = await takeManifest(path.join(root, "baseline"), { exclude: EXCLUDE });

          // The manifest lists exactly the non-excluded baseline entries, with their facts.
          const listed = Object.fromEntries(baseline.entries.map((e) => [e.path, e]));
          const wanted = Object.entries(base).filter(([p]) => !isExcluded(p));
          expect(Object.keys(listed).sort()).toEqual(wanted.map(([p]) => p).sort());
          for (const [p, node] of wanted) {
            const entry = listed[p]!;
            if (node.type === "file")
              expect(entry).toEqual({
                path: p,
                type: "file",
                mode: node.mode,
                sha256: sha(node.content),
                size: node.content.length,
              });
            if (node.type === "dir")
              expect(entry).toEqual({ path: p, type: "directory", mode: node.mode });
            if (node.type === "symlink")
              expect(entry).toMatchObject({ path: p, type: "symlink", target: node.target });
          }

          const before = await readTree(path.join(root, "host"));
          const expected = expectedMerge(base, sandbox, host, isExcluded);
          const result = await mergeSnapshot({
            target: path.join(root, "host"),
            baseline,
            snapshotDir: path.join(root, "snapshot"),
            locks,
            exclude: EXCLUDE,
            consumeSnapshot,
            seams: { fsOps: noFlushFsOps },
          }).catch((error: unknown) => error);
          const after = await readTree(path.join(root, "host"));
          expect(await readTree(path.join(root, "outside"))).toEqual({
            canary: { type: "file", mode: 0o644, content: "outside" },
          });
          outcomes[expected.kind]++;
          if (expected.kind === "conflict") {
            expect(result).toBeInstanceOf(MergeConflictError);
            expect(after).toEqual(before);
          } else if (expected.kind === "unchanged") {
            expect(result).toEqual({ kind: "unchanged" });
            expect(after).toEqual(before);
          } else {
            expect(result).toEqual({
              kind: "applied",
              written: expected.written,
              deleted: expected.deleted,
            });
            expect(sortTree(after)).toEqual(expected.tree);
          }
        } finally {
          await rm(root, { recursive: true, force: true });
        }
      }),
      { numRuns: 200 },
    );
    // The generator must exercise all three outcomes, or the property proves little.
    expect(outcomes.conflict).toBeGreaterThan(10);
    expect(outcomes.applied).toBeGreaterThan(10);
    expect(outcomes.unchanged).toBeGreaterThan(0);
  }, 120_000);
});
