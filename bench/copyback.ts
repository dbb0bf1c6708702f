// `pnpm bench:copyback`: the copyback engine against plain tools, on one machine in one run.
// Prints figures and PASS/MISS per target; asserts nothing.
//
//   (a) baseline  `tar -C src -cf - . | tar -C dst -xf - && sync`, fresh dst each run
//   (b) full      export streamed into receiveWorkspaceArchive (validated as it arrives, kept
//                 in memory, then extracted with every file hashed as it is written) -> merge
//                 into an empty host with the manifest receive returned
//                 ((a) and (b) runs alternate, so a change in machine load hits both alike)
//   (c) 10 files  10 changed files, host = baseline: the full-export pipeline and the delta
//                 pipeline (sandbox-side manifest with a stat cache, only changed entries sent)
//   (d) unchanged the same two pipelines with nothing changed
//   (e) locks     uncontended acquire+release (1,000x); 4 processes hammering one target
//
// Durability: (a) ends with sync(1). The merge ends with its own barriers (merge/apply.ts):
// more than 64 new files -> one syncfs(2) of the target's filesystem (`sync -f`) before the
// renames that publish them and one after (or fsync of each changed directory); fewer -> fsync
// of each staged file, then of each changed directory. Both clocks stop with the data on disk.
//
// Options: --runs=N (default 3), --keep (keep the temporary directory).
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { DirectoryMergeLocks, scanWorkspace, type Manifest } from "@copyback/core";
import { benchContended, benchUncontended } from "./lib/locks-bench";
import { deltaPipeline, fullPipeline, run, settle, tarPipeline, type Stages } from "./lib/pipeline";
import { median, ms, peakRssMiB, renderTable, timed } from "./lib/stats";
import { DEFAULT_WORKSPACE, generateWorkspace, prng } from "./lib/workspace";

const RUNS = Math.max(3, Number(process.argv.find((a) => a.startsWith("--runs="))?.slice(7) ?? 3));
const KEEP = process.argv.includes("--keep");
const EMPTY: Manifest = { version: 1, entries: [] };
const rss: [string, number][] = [];
const mark = (stage: string) => rss.push([stage, peakRssMiB()]);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

const work = await mkdtemp(path.join(os.tmpdir(), "copyback-bench-"));
console.log(
  `copyback benchmark in ${work}; ${RUNS} runs per figure; node ${process.version}; ${os.cpus().length} CPUs; load ${load()}`,
);

try {
  const ws = path.join(work, "workspace");
  const gen = await timed(() => generateWorkspace(ws, DEFAULT_WORKSPACE));
  console.log(
    `workspace: ${gen.value.files.length} files, ${gen.value.directories.length} directories, ${gen.value.symlinks} symlinks, ${(gen.value.totalBytes / 2 ** 20).toFixed(0)} MiB (generated in ${ms(gen.ms)})`,
  );
  await settle();
  mark("generate");

  const home = path.join(work, "home");
  await mkdir(path.join(home, "staging"), { recursive: true, mode: 0o700 });
  const locks = new DirectoryMergeLocks({ instanceRoot: home });

  // (a) and (b), alternating.
  const tarRuns: number[] = [];
  const tarCpu: number[] = [];
  const fullRuns: Stages[] = [];
  for (let i = 0; i < RUNS; i++) {
    const dst = path.join(work, `tar-dst-${i}`);
    await mkdir(dst);
    await settle();
    const t = await tarPipeline(ws, dst);
    tarRuns.push(t.ms);
    tarCpu.push(t.cpu);
    await rm(dst, { recursive: true, force: true });

    const host = path.join(work, `host-full-${i}`);
    await mkdir(host);
    await settle();
    const r = await fullPipeline({
      workspace: ws,
      target: host,
      baseline: EMPTY,
      home,
      locks,
      archive: path.join(work, "full.tar"),
    });
    mark(`(b) run ${i + 1}`);
    if (r.outcome.kind !== "applied") throw new Error("full copyback did not apply");
    fullRuns.push({ ...r.stages, total: r.total, cpu: r.cpu });
    await rm(host, { recursive: true, force: true });
    console.log(
      `  run ${i + 1}: tar|tar&&sync ${ms(t.ms)}, full copyback ${ms(r.total)} = ${(r.total / t.ms).toFixed(2)}x (export+validate ${ms(r.stages["export+validate"] ?? 0)}, extract ${ms(r.stages.extract ?? 0)}, merge ${ms(r.stages.merge ?? 0)}; load ${load()})`,
    );
  }
  const tarMs = median(tarRuns);
  const full = summarize("(b) full copyback", fullRuns);
  mark("(a)+(b)");

  // Two hosts that hold exactly the workspace (the seeded baseline): one per pipeline.
  const hostFull = path.join(work, "host-a");
  const hostDelta = path.join(work, "host-b");
  for (const h of [hostFull, hostDelta]) {
    await mkdir(h);
    await run("cp", ["-a", `${ws}/.`, `${h}/`]);
  }
  // Seeding on the sandbox side: the baseline manifest and the stat cache.
  const seeded = await timed(() => scanWorkspace(ws));
  let baseline = seeded.value.manifest;
  let cache = seeded.value.cache;
  console.log(
    `seeding scan (hash everything, sandbox side): ${ms(seeded.ms)}, ${Object.keys(cache.files).length} files cached`,
  );
  await settle();

  // (c) 10 changed files per run (other files each run; edits of 64 bytes, same size).
  const rand = prng(7);
  const changedFull: Stages[] = [];
  const changedDelta: Stages[] = [];
  const uncachedScan: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    for (let k = 0; k < 10; k++) {
      const f = gen.value.files[Math.floor(rand() * gen.value.files.length)]!;
      const abs = path.join(ws, f.path);
      const edit = Buffer.from(await readFile(abs));
      randomBytes(Math.min(64, edit.length)).copy(edit, Math.floor(edit.length / 2));
      await writeFile(abs, edit);
    }
    await settle();
    const a = await fullPipeline({
      workspace: ws,
      target: hostFull,
      baseline,
      home,
      locks,
      archive: path.join(work, "c-full.tar"),
    });
    if (a.outcome.kind !== "applied") throw new Error("(c) full pipeline did not apply");
    changedFull.push({ ...a.stages, total: a.total, cpu: a.cpu });
    await settle();
    const d = await deltaPipeline({
      workspace: ws,
      target: hostDelta,
      baseline,
      home,
      locks,
      cache,
      archive: path.join(work, "c-delta.tar"),
    });
    if (d.outcome.kind !== "applied" || d.archiveEntries < 1)
      throw new Error("(c) delta pipeline did not apply");
    changedDelta.push({ ...d.stages, total: d.total, cpu: d.cpu });
    uncachedScan.push((await timed(() => scanWorkspace(ws))).ms);
    console.log(
      `  run ${i + 1}: full-export pipeline ${ms(a.total)}, delta pipeline ${ms(d.total)} (${d.hashedFiles} files hashed, ${d.archiveEntries} entries sent; load ${load()})`,
    );
    baseline = d.manifest;
    cache = d.cache;
  }
  const cFull = summarize("(c) 10 files, full export", changedFull);
  const cDelta = summarize("(c) 10 files, delta", changedDelta);
  const scanNoCache = median(uncachedScan);
  mark("(c)");

  // (d) unchanged
  // One scan first so the cache also vouches for the files (c) changed last.
  cache = (await scanWorkspace(ws, { cache })).cache;
  const unchangedFull: Stages[] = [];
  const unchangedDelta: Stages[] = [];
  for (let i = 0; i < RUNS; i++) {
    await settle();
    const a = await fullPipeline({
      workspace: ws,
      target: hostFull,
      baseline,
      home,
      locks,
      archive: path.join(work, "d-full.tar"),
    });
    if (a.outcome.kind !== "unchanged") throw new Error("(d) full pipeline: not unchanged");
    unchangedFull.push({ ...a.stages, total: a.total, cpu: a.cpu });
    const d = await deltaPipeline({
      workspace: ws,
      target: hostDelta,
      baseline,
      home,
      locks,
      cache,
      archive: path.join(work, "d-delta.tar"),
    });
    if (d.outcome.kind !== "unchanged") throw new Error("(d) delta pipeline: not unchanged");
    unchangedDelta.push({ ...d.stages, total: d.total, cpu: d.cpu });
    console.log(
      `  run ${i + 1}: full-export pipeline ${ms(a.total)}, delta pipeline ${ms(d.total)} (${d.hashedFiles} files hashed)`,
    );
  }
  const dFull = summarize("(d) unchanged, full export", unchangedFull);
  const dDelta = summarize("(d) unchanged, delta", unchangedDelta);
  mark("(d)");

  // (e) locks
  const un = await benchUncontended(work, 1000);
  const con = await benchContended(work, { processes: 4, durationMs: 5_000, holdMs: 0 });
  mark("(e)");

  // Report
  const fullMs = full.total;
  const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");
  const stageCols = [
    "export+validate",
    "extract",
    "scan",
    "archive",
    "transfer",
    "baseline",
    "receive",
    "merge",
    "total",
    "cpu",
  ];
  console.log(
    "\nStages, median over the runs (full: export+validate = the export streamed in, validated as it arrives |",
  );
  console.log(
    "extract = files written from memory by worker threads, each hashed on the way | merge;",
  );
  console.log(
    "delta: scan = sandbox manifest with stat cache | archive = tar of the changed entries | transfer = manifest JSON",
  );
  console.log(
    "round trip | baseline = parseManifest of the stored baseline (once per copyback) | receive = manifest tree check +",
  );
  console.log("validate + extract + verify | merge; cpu = CPU time of all stages):");
  console.log(
    renderTable(
      ["scenario", ...stageCols],
      [full, cFull, cDelta, dFull, dDelta].map((s) => [
        s.label,
        ...stageCols.map((c) => (c in s.stages ? ms(s.stages[c] as number) : "-")),
      ]),
    ),
  );
  console.log(
    `tar | tar && sync runs: ${tarRuns.map(ms).join(", ")}; full copyback runs: ${fullRuns.map((r) => ms(r.total ?? Number.NaN)).join(", ")}`,
  );
  console.log(
    `sandbox scan without a stat cache (reads and hashes all 200 MiB): median ${ms(scanNoCache)}`,
  );

  const tarCpuMs = median(tarCpu);
  // Each full run against the tar run just before it: the same machine state, as far as it goes.
  const pairRatios = fullRuns.map((r, i) => (r.total ?? Number.NaN) / (tarRuns[i] ?? Number.NaN));
  console.log(
    `CPU time: tar | tar && sync ${ms(tarCpuMs)} (both tar processes), full copyback ${ms(full.stages.cpu ?? Number.NaN)} (${((full.stages.cpu ?? Number.NaN) / tarCpuMs).toFixed(2)}x)`,
  );
  const cNoCache = cDelta.total - (cDelta.stages.scan ?? 0) + scanNoCache;
  const dNoCache = dDelta.total - (dDelta.stages.scan ?? 0) + scanNoCache;
  console.log("\nTargets:");
  console.log(
    renderTable(
      ["target", "measured", "reference", "ratio", "limit", "result"],
      [
        [
          "full copyback <= 1.5x tar|tar&&sync",
          ms(fullMs),
          `tar ${ms(tarMs)}`,
          `${(fullMs / tarMs).toFixed(2)}x (pairs ${pairRatios.map((r) => r.toFixed(2)).join(", ")})`,
          "1.50x",
          verdict(fullMs <= 1.5 * tarMs),
        ],
        [
          "10-file change < 10% of full (delta)",
          ms(cDelta.total),
          `full ${ms(fullMs)}`,
          pct(cDelta.total / fullMs),
          "10%",
          verdict(cDelta.total < 0.1 * fullMs),
        ],
        [
          "  same, full-export pipeline",
          ms(cFull.total),
          `full ${ms(fullMs)}`,
          pct(cFull.total / fullMs),
          "10%",
          verdict(cFull.total < 0.1 * fullMs),
        ],
        [
          "  same, delta without stat cache",
          ms(cNoCache),
          `full ${ms(fullMs)}`,
          pct(cNoCache / fullMs),
          "10%",
          verdict(cNoCache < 0.1 * fullMs),
        ],
        [
          "unchanged < 5% of full (delta)",
          ms(dDelta.total),
          `full ${ms(fullMs)}`,
          pct(dDelta.total / fullMs),
          "5%",
          verdict(dDelta.total < 0.05 * fullMs),
        ],
        [
          "  same, full-export pipeline",
          ms(dFull.total),
          `full ${ms(fullMs)}`,
          pct(dFull.total / fullMs),
          "5%",
          verdict(dFull.total < 0.05 * fullMs),
        ],
        [
          "  same, delta without stat cache",
          ms(dNoCache),
          `full ${ms(fullMs)}`,
          pct(dNoCache / fullMs),
          "5%",
          verdict(dNoCache < 0.05 * fullMs),
        ],
        [
          "uncontended lock, median < 2 ms",
          ms(un.medianMs),
          "1,000 runs",
          "-",
          "2 ms",
          verdict(un.medianMs < 2),
        ],
        [
          "uncontended lock, p99 < 2 ms",
          ms(un.p99Ms),
          `max ${ms(un.maxMs)}`,
          "-",
          "2 ms",
          verdict(un.p99Ms < 2),
        ],
      ],
    ),
  );
  console.log(
    `\nContended lock: ${con.processes} processes on one target for ${con.durationMs / 1000} s, empty critical section: ${con.perSecond.toFixed(0)} acquisitions/s (${con.perProcess.join("/")} per process), wait p50 ${ms(con.waitP50Ms)}, p99 ${ms(con.waitP99Ms)}, max ${ms(con.waitMaxMs)}`,
  );
  console.log(
    `First acquire of a new target (creates the lock file, checks the filesystem): ${ms(un.firstMs)}`,
  );
  console.log(
    `Peak RSS of the benchmark process after each part: ${rss.map(([s, m]) => `${s} ${m.toFixed(0)} MiB`).join(", ")}`,
  );
  console.log(`Load average at the end: ${load()} on ${os.cpus().length} CPUs`);
} finally {
  if (KEEP) console.log(`kept ${work}`);
  else await rm(work, { recursive: true, force: true });
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

interface Summary {
  label: string;
  /** Median of each stage (and of "total") over the runs. */
  stages: Stages;
  total: number;
}

function summarize(label: string, runs: Stages[]): Summary {
  const keys = new Set(runs.flatMap((r) => Object.keys(r)));
  const stages: Stages = {};
  for (const k of keys) stages[k] = median(runs.map((r) => r[k] ?? 0));
  return { label, stages, total: stages.total ?? Number.NaN };
}
