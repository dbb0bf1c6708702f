// `tsx bench/delta-profile.ts [dir]`: where the delta copyback's time goes, step by step
// (a development aid for the delta targets of `bench:copyback`; figures only). Reuses the
// workspace in [dir] when present.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import {
  checkManifestTree,
  cleanStrayTemporaries,
  diffManifests,
  DirectoryMergeLocks,
  exportDeltaArchive,
  mergeSnapshot,
  parseManifest,
  probeHost,
  receiveDeltaArchive,
  scanWorkspace,
} from "@copyback/core";
import { deltaPipeline, run, settle } from "./lib/pipeline";
import { ms } from "./lib/stats";
import { generateWorkspace, planWorkspace, DEFAULT_WORKSPACE, prng } from "./lib/workspace";

const work = process.argv[2] ?? (await mkdtemp(path.join(os.tmpdir(), "delta-profile-")));
const ws = path.join(work, "workspace");
if (!existsSync(ws)) await generateWorkspace(ws, DEFAULT_WORKSPACE);
const files = planWorkspace(DEFAULT_WORKSPACE).files;
const home = path.join(work, "home");
await rm(home, { recursive: true, force: true });
await mkdir(path.join(home, "staging"), { recursive: true, mode: 0o700 });
const host = path.join(work, "host");
await rm(host, { recursive: true, force: true });
await mkdir(host);
await run("cp", ["-a", `${ws}/.`, `${host}/`]);
const locks = new DirectoryMergeLocks({ instanceRoot: home });

const t = async <T>(label: string, fn: () => Promise<T> | T): Promise<T> => {
  const s = performance.now();
  const v = await fn();
  console.log(`    ${label.padEnd(34)} ${ms(performance.now() - s)}`);
  return v;
};

const seeded = await scanWorkspace(ws);
let baseline = seeded.manifest;
let cache = seeded.cache;
await new Promise((r) => setTimeout(r, 2100)); // past the racy window
cache = (await scanWorkspace(ws, { cache })).cache;
const rand = prng(7);

for (let round = 0; round < 3; round++) {
  for (const changed of [0, 10]) {
    for (let k = 0; k < changed; k++) {
      const f = files[Math.floor(rand() * files.length)]!;
      const abs = path.join(ws, f.path);
      const edit = Buffer.from(await readFile(abs));
      randomBytes(Math.min(64, edit.length)).copy(edit, Math.floor(edit.length / 2));
      await writeFile(abs, edit);
    }
    await settle();
    console.log(`round ${round + 1}, ${changed} changed files: steps`);
    const exported = await t("exportDeltaArchive (scan+diff)", () =>
      exportDeltaArchive(ws, baseline, { cache }),
    );
    await t("  scanWorkspace alone", () => scanWorkspace(ws, { cache }));
    await t("  diffManifests alone", () => diffManifests(baseline, exported.manifest));
    const json = await t("JSON stringify", () => JSON.stringify(exported.manifest));
    const value = await t("JSON parse", () => JSON.parse(json) as unknown);
    const parsed = await t("parseManifest", () => parseManifest(value));
    await t("parseManifest (baseline)", () => parseManifest(baseline));
    await t("checkManifestTree", () => checkManifestTree(parsed));
    await t("cleanStrayTemporaries", () =>
      cleanStrayTemporaries(host, () => false, {
        rmdir: async () => {},
        unlink: async () => {},
      } as never),
    );
    await t("probeHost (changed paths)", async () => {
      const d = diffManifests(baseline, parsed);
      return probeHost({
        targetReal: host,
        paths: d.changed.map((e) => e.path),
        removedDirectories: [],
        needsHash: () => true,
        excluded: () => false,
        concurrency: 16,
      });
    });
    // The product path, with the merge's inner milestones.
    const hostBaseline = parseManifest(JSON.parse(JSON.stringify(baseline)));
    const staging = await mkdtemp(path.join(home, "staging", "p-"));
    const archive = path.join(work, "delta.tar");
    if (exported.archive) {
      const { pipeline } = await import("node:stream/promises");
      const { createWriteStream } = await import("node:fs");
      await t("write delta archive", () => pipeline(exported.archive!, createWriteStream(archive)));
    }
    const received = await t("receiveDeltaArchive", () =>
      receiveDeltaArchive({
        archive: exported.archive ? archive : null,
        manifest: value,
        baseline: hostBaseline,
        stagingDir: staging,
      }),
    );
    let m0 = 0;
    const marks: string[] = [];
    const mark = (s: string) => marks.push(`${s} +${ms(performance.now() - m0)}`);
    m0 = performance.now();
    await t("mergeSnapshot", () =>
      mergeSnapshot({
        target: host,
        baseline: hostBaseline,
        snapshotDir: staging,
        snapshotManifest: received.snapshotManifest,
        locks,
        consumeSnapshot: true,
        hooks: {
          authorize: async () => void mark("authorize"),
          publish: async () => void mark("publish"),
        },
        seams: {
          cleanTemporaries: async (...a) => {
            mark("clean<");
            const r = await cleanStrayTemporaries(...a);
            mark("clean>");
            return r;
          },
          probeHost: async (r) => {
            mark("probe<");
            const x = await probeHost(r);
            mark("probe>");
            return x;
          },
        },
      }),
    );
    console.log(`      merge milestones: ${marks.join(", ")}`);
    await rm(staging, { recursive: true, force: true });
    await rm(archive, { force: true });
    // Whole pipeline as bench:copyback times it.
    const d = await deltaPipeline({
      workspace: ws,
      target: host,
      baseline,
      home,
      locks,
      cache,
      archive,
    });
    console.log(
      `  deltaPipeline total ${ms(d.total)}: ${Object.entries(d.stages)
        .map(([k, v]) => `${k} ${ms(v)}`)
        .join(", ")}`,
    );
    baseline = d.manifest;
    cache = d.cache;
  }
}
