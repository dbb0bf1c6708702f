// The delta copyback end to end: sandbox export of only the changed entries plus the complete
// manifest, host receive and verification, then the ordinary merge.
import { execFileSync } from "node:child_process";
import { chmod, cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  exportDeltaArchive,
  receiveDeltaArchive,
  DeltaMismatchError,
} from "../../src/copyback/delta/index";
import { takeManifest, parseManifest, type Manifest } from "../../src/copyback/manifest/index";
import { isValidatedManifest } from "../../src/copyback/manifest/parse";
import {
  classifyCopybackFailure,
  mergeSnapshot,
  MergeConflictError,
} from "../../src/copyback/merge/index";
import { UnsafeArchiveError } from "../../src/copyback/archive/index";
import { snapshotTree } from "../cli/helpers";
import { deltaCopyback, removeTempDirs, saveArchive, tempDir } from "./helpers";

afterEach(removeTempDirs);

interface World {
  work: string;
  sandbox: string;
  host: string;
  baseline: Manifest;
}

async function world(): Promise<World> {
  const work = await tempDir("e2e");
  const sandbox = path.join(work, "sandbox");
  const host = path.join(work, "host");
  await mkdir(path.join(sandbox, "src/lib"), { recursive: true });
  await mkdir(path.join(sandbox, "docs"), { recursive: true });
  await writeFile(path.join(sandbox, "README.md"), "# hi\n");
  await writeFile(path.join(sandbox, "src/main.ts"), "main\n");
  await writeFile(path.join(sandbox, "src/lib/util.ts"), "util\n");
  await writeFile(path.join(sandbox, "docs/old.md"), "old\n");
  for (let i = 0; i < 50; i++)
    await writeFile(path.join(sandbox, "src/lib", `f${i}.ts`), `file ${i}\n`);
  await symlink("src/main.ts", path.join(sandbox, "entry"));
  await cp(sandbox, host, { recursive: true, verbatimSymlinks: true });
  return { work, sandbox, host, baseline: await takeManifest(sandbox) };
}

function tarList(file: string): string[] {
  return execFileSync("tar", ["-tf", file], { encoding: "utf8" }).trim().split("\n").sort();
}

describe("delta copyback", () => {
  it("exports only changed entries and their parents; the merge makes the host equal the sandbox", async () => {
    const w = await world();
    await writeFile(path.join(w.sandbox, "src/lib/util.ts"), "util v2\n");
    await rm(path.join(w.sandbox, "docs/old.md"));
    await mkdir(path.join(w.sandbox, "new/nested"), { recursive: true });
    await writeFile(path.join(w.sandbox, "new/nested/n.ts"), "n\n");
    await chmod(path.join(w.sandbox, "src/main.ts"), 0o755);
    await rm(path.join(w.sandbox, "entry"));
    await symlink("README.md", path.join(w.sandbox, "entry"));

    const exported = await exportDeltaArchive(w.sandbox, w.baseline);
    expect(exported.changed).toEqual([
      "entry",
      "new",
      "new/nested",
      "new/nested/n.ts",
      "src/lib/util.ts",
      "src/main.ts",
    ]);
    expect(exported.removed).toEqual(["docs/old.md"]);
    const file = await saveArchive(exported, path.join(w.work, "d.tar"));
    expect(tarList(file!)).toEqual([
      "entry",
      "new/",
      "new/nested/",
      "new/nested/n.ts",
      "src/",
      "src/lib/",
      "src/lib/util.ts",
      "src/main.ts",
    ]);
    expect(exported.manifest).toEqual(await takeManifest(w.sandbox));

    const { outcome } = await deltaCopyback({
      workspace: w.sandbox,
      host: w.host,
      baseline: w.baseline,
      work: w.work,
    });
    expect(outcome).toMatchObject({ kind: "applied", deleted: ["docs/old.md"] });
    expect(await snapshotTree(w.host)).toEqual(await snapshotTree(w.sandbox));
  });

  it("R-LK-6: no change: no archive, the merge reports unchanged and leaves a concurrent host edit alone", async () => {
    const w = await world();
    await writeFile(path.join(w.host, "README.md"), "edited on the host\n");
    const before = await snapshotTree(w.host);
    const { outcome, exported } = await deltaCopyback({
      workspace: w.sandbox,
      host: w.host,
      baseline: w.baseline,
      work: w.work,
    });
    expect(exported.archive).toBeNull();
    expect(outcome).toEqual({ kind: "unchanged" });
    expect(await snapshotTree(w.host)).toEqual(before);
  });

  it("R-LK-6: each manifest parsed once (stored baseline, received snapshot): an unchanged snapshot still takes the lock and runs both hooks; a changed one still runs the conflict preflight", async () => {
    const w = await world();
    const baseline = parseManifest(JSON.parse(JSON.stringify(w.baseline)));
    const events: string[] = [];
    const locks = {
      withLock: async <T>(target: string, fn: (lease: { target: string }) => Promise<T>) => {
        events.push("lock");
        try {
          return await fn({ target });
        } finally {
          events.push("unlock");
        }
      },
    };
    const hooks = {
      authorize: async () => void events.push("authorize"),
      publish: async (o: { kind: string }) => void events.push(`publish ${o.kind}`),
    };
    const copyback = async () => {
      const exported = await exportDeltaArchive(w.sandbox, baseline);
      const archive = await saveArchive(exported, path.join(w.work, `d-${events.length}.tar`));
      const staging = await mkdtemp(path.join(w.work, "staging-"));
      const receipt = await receiveDeltaArchive({
        archive,
        manifest: JSON.parse(JSON.stringify(exported.manifest)),
        baseline,
        stagingDir: staging,
      });
      // The receipt's manifest is the validated one: the merge takes it without a second check.
      expect(isValidatedManifest(receipt.snapshotManifest)).toBe(true);
      expect(parseManifest(receipt.snapshotManifest)).toBe(receipt.snapshotManifest);
      return mergeSnapshot({
        target: w.host,
        baseline,
        snapshotDir: staging,
        snapshotManifest: receipt.snapshotManifest,
        locks,
        hooks,
        consumeSnapshot: true,
      });
    };

    await writeFile(path.join(w.host, "README.md"), "edited on the host\n");
    const before = await snapshotTree(w.host);
    expect(await copyback()).toEqual({ kind: "unchanged" });
    expect(events).toEqual(["lock", "authorize", "publish unchanged", "unlock"]);
    expect(await snapshotTree(w.host)).toEqual(before);

    // Changed on both sides: the preflight finds the conflict, nothing is written or published.
    events.length = 0;
    await writeFile(path.join(w.sandbox, "README.md"), "edited in the sandbox\n");
    await writeFile(path.join(w.sandbox, "src/extra.ts"), "extra\n");
    await expect(copyback()).rejects.toBeInstanceOf(MergeConflictError);
    expect(events).toEqual(["lock", "authorize", "unlock"]);
    expect(await snapshotTree(w.host)).toEqual(before);
  });

  it("the full conflict preflight still runs: a path changed on both sides is a conflict, nothing written", async () => {
    const w = await world();
    await writeFile(path.join(w.sandbox, "src/main.ts"), "sandbox\n");
    await writeFile(path.join(w.sandbox, "src/extra.ts"), "extra\n");
    await writeFile(path.join(w.host, "src/main.ts"), "host\n");
    const before = await snapshotTree(w.host);
    await expect(
      deltaCopyback({ workspace: w.sandbox, host: w.host, baseline: w.baseline, work: w.work }),
    ).rejects.toBeInstanceOf(MergeConflictError);
    expect(await snapshotTree(w.host)).toEqual(before);
  });

  it("excluded trees are neither exported nor touched on the host", async () => {
    const w = await world();
    await mkdir(path.join(w.sandbox, "node_modules/dep"), { recursive: true });
    await writeFile(path.join(w.sandbox, "node_modules/dep/i.js"), "sandbox dep\n");
    await mkdir(path.join(w.host, "node_modules/dep"), { recursive: true });
    await writeFile(path.join(w.host, "node_modules/dep/i.js"), "host dep\n");
    await writeFile(path.join(w.sandbox, "src/main.ts"), "v2\n");
    const { outcome, exported } = await deltaCopyback({
      workspace: w.sandbox,
      host: w.host,
      baseline: w.baseline,
      work: w.work,
      exclude: ["node_modules"],
    });
    expect(exported.changed).toEqual(["src/main.ts"]);
    expect(outcome).toMatchObject({ kind: "applied", written: ["src/main.ts"] });
    const { readFile } = await import("node:fs/promises");
    expect(await readFile(path.join(w.host, "node_modules/dep/i.js"), "utf8")).toBe("host dep\n");
  });
});

describe("receiveDeltaArchive refuses what does not add up (nothing reaches the host)", () => {
  async function received(w: World, mutate: (manifest: Manifest) => void, archiveFrom?: string) {
    const exported = await exportDeltaArchive(w.sandbox, w.baseline);
    const file = await saveArchive(exported, path.join(w.work, "d.tar"));
    const manifest = JSON.parse(JSON.stringify(exported.manifest)) as Manifest;
    mutate(manifest);
    const staging = await mkdtemp(path.join(w.work, "staging-"));
    return receiveDeltaArchive({
      archive: archiveFrom ?? file,
      manifest,
      baseline: w.baseline,
      stagingDir: staging,
    });
  }

  it("a manifest hash that the archive's bytes do not have: provider_delta_mismatch (retryable, R-RR-1)", async () => {
    const w = await world();
    await writeFile(path.join(w.sandbox, "src/main.ts"), "v2\n");
    const error = await received(w, (m) => {
      const e = m.entries.find((x) => x.path === "src/main.ts")!;
      e.sha256 = "0".repeat(64);
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeltaMismatchError);
    expect(error).toMatchObject({ code: "provider_delta_mismatch", path: "src/main.ts" });
    expect(classifyCopybackFailure(error)).toEqual({ retryable: true, reason: "provider_error" });
  });

  it("a changed entry missing from the archive, or an archive entry not listed as changed", async () => {
    const w = await world();
    await writeFile(path.join(w.sandbox, "src/main.ts"), "v2\n");
    await writeFile(path.join(w.sandbox, "docs/new.md"), "new\n");
    // The manifest claims README.md changed too: the archive lacks it.
    await expect(
      received(w, (m) => {
        m.entries.find((x) => x.path === "README.md")!.sha256 = "1".repeat(64);
      }),
    ).rejects.toMatchObject({ code: "provider_delta_mismatch", path: "README.md" });
    // The manifest claims main.ts is unchanged (baseline values): the archive still holds it.
    const base = w.baseline.entries.find((x) => x.path === "src/main.ts")!;
    await expect(
      received(w, (m) => {
        Object.assign(
          m.entries.find((x) => x.path === "src/main.ts")!,
          base,
        );
      }),
      // "src" comes first: it is no longer the parent of anything changed.
    ).rejects.toMatchObject({
      code: "provider_delta_mismatch",
      path: expect.stringMatching(/^src/),
    });
    // The manifest claims nothing changed at all, yet an archive came.
    await expect(
      received(w, (m) => {
        m.entries = JSON.parse(JSON.stringify(w.baseline.entries)) as Manifest["entries"];
      }),
    ).rejects.toMatchObject({ code: "provider_delta_mismatch", path: "" });
  });

  it("R-UA-2: a manifest symlink that escapes the workspace is an unsafe archive, even if unchanged in the archive", async () => {
    const w = await world();
    await writeFile(path.join(w.sandbox, "src/main.ts"), "v2\n");
    const error = await received(w, (m) => {
      m.entries.push({ path: "zz-escape", type: "symlink", mode: 0o777, target: "../../etc" });
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsafeArchiveError);
    expect((error as UnsafeArchiveError).violations.map((v) => v.code)).toContain("symlink_escape");
  });

  it("R-UA-2: a hostile delta archive is rejected before anything is extracted", async () => {
    const w = await world();
    await writeFile(path.join(w.sandbox, "src/main.ts"), "v2\n");
    const evil = path.join(w.work, "evil.tar");
    const src = path.join(w.work, "evil-src");
    await mkdir(path.join(src, "src"), { recursive: true });
    await writeFile(path.join(src, "src/main.ts"), "v2\n");
    execFileSync("tar", [
      "-C",
      src,
      "--transform",
      "s,^\\./src/main\\.ts$,../main.ts,",
      "-cf",
      evil,
      ".",
    ]);
    const staging = await mkdtemp(path.join(w.work, "staging-"));
    const exported = await exportDeltaArchive(w.sandbox, w.baseline);
    await expect(
      receiveDeltaArchive({
        archive: evil,
        manifest: exported.manifest,
        baseline: w.baseline,
        stagingDir: staging,
      }),
    ).rejects.toBeInstanceOf(UnsafeArchiveError);
    expect(await readdir(staging)).toEqual([]);
  });

  it("an invalid manifest is refused (invalid_manifest)", async () => {
    const w = await world();
    const staging = await mkdtemp(path.join(w.work, "staging-"));
    await expect(
      receiveDeltaArchive({
        archive: null,
        manifest: {
          version: 1,
          entries: [{ path: "../x", type: "file", mode: 420, sha256: "0".repeat(64) }],
        },
        baseline: w.baseline,
        stagingDir: staging,
      }),
    ).rejects.toMatchObject({ code: "invalid_manifest" });
  });
});
