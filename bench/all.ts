// `pnpm bench:all`: the quick benchmarks one after another, each in its own process (so one's
// memory and JIT state do not weigh on the next), and one summary table of every target with
// PASS/MISS, the load average before and after each benchmark and its CPU time (its whole
// process tree, from bash's `times`). Figures only; nothing asserted. Each benchmark's own
// output goes to this one's as it runs, and its targets are read from its `target | ...` lines
// (bench/lib/targets.ts) or, for a benchmark that prints none, from the lines that say PASS or MISS.
//
// Reduced sizes, so that the whole set ends in under 10 minutes on the 2-core machine (the
// issue-size runs are the benchmarks' own defaults, and the --large copyback is never part of it):
//   run-copyback   default tree (10,000 files / 200 MiB), --runs=3 --warmup=0 (issue 24's targets;
//                  the first pair pays the JIT warm-up, the median of three pairs outvotes it). The
//                  whole set took 10.8 min at load 9 -> 3 with a warm-up round (run-copyback 470 s).
//   copyback       the engine pipelines, default tree, --runs=3
//   bytes-moved    its default tree (2,000 files / 40 MiB) through the Daytona emulator
//   locks          as is
//   reconciler     BENCH_PASSES=2, BENCH_SAMPLES=100
//   wake-latency   --wakes=50 --reference-wakes=10 (the p99 of 50 wakes is their second worst)
//   issue-page, live-updates: only when the console is built (apps/web/.next/BUILD_ID), with
//                  BENCH_CACHE_OFF_RUN=0 (issue-page) and BENCH_CHANGES=5 (live-updates)
// Options: --only=a,b (run these benchmarks alone), --skip=a,b.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { renderTable } from "./lib/stats";
import { loadAverage, parseTargets, type TargetLine } from "./lib/targets";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const consoleBuilt = existsSync(path.join(root, "apps", "web", ".next", "BUILD_ID"));

interface Benchmark {
  name: string;
  script: string;
  args?: string[];
  env?: Record<string, string>;
  /** Why it is not run, if it is not. */
  skip?: string;
}

const BENCHMARKS: Benchmark[] = [
  { name: "run-copyback", script: "run-copyback.ts", args: ["--runs=3", "--warmup=0"] },
  { name: "copyback", script: "copyback.ts", args: ["--runs=3"] },
  { name: "bytes-moved", script: "bytes-moved.ts" },
  { name: "locks", script: "locks.ts" },
  { name: "reconciler", script: "reconciler.ts", env: { BENCH_PASSES: "2", BENCH_SAMPLES: "100" } },
  { name: "wake-latency", script: "wake-latency.ts", args: ["--wakes=50", "--reference-wakes=10"] },
  {
    name: "issue-page",
    script: "issue-page.ts",
    env: { BENCH_CACHE_OFF_RUN: "0" },
    ...(consoleBuilt ? {} : { skip: "console not built" }),
  },
  {
    name: "live-updates",
    script: "live-updates.ts",
    env: { BENCH_CHANGES: "5" },
    ...(consoleBuilt ? {} : { skip: "console not built" }),
  },
];

const list = (flag: string) =>
  process.argv
    .find((a) => a.startsWith(`--${flag}=`))
    ?.slice(flag.length + 3)
    .split(",")
    .filter(Boolean);
const only = list("only");
const skipped = new Set(list("skip") ?? []);
for (const name of [...(only ?? []), ...skipped]) {
  if (!BENCHMARKS.some((b) => b.name === name))
    throw new Error(`no benchmark named ${name}: ${BENCHMARKS.map((b) => b.name).join(", ")}`);
}

interface Outcome {
  benchmark: Benchmark;
  exitCode: number | null;
  wallMs: number;
  cpuMs: number;
  loadBefore: string;
  loadAfter: string;
  targets: TargetLine[];
}

/** bash's `times`, last line: the children's user and system time. */
function childrenCpuMs(times: string): number {
  const lines = times.trim().split("\n");
  const fields = (lines[lines.length - 1] ?? "").trim().split(/\s+/);
  return fields.reduce((sum, field) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(field);
    return sum + (m ? (Number(m[1]) * 60 + Number(m[2])) * 1000 : 0);
  }, 0);
}

/** Runs one benchmark, its output streamed through (and kept, to read its targets). */
function runBenchmark(benchmark: Benchmark): Promise<Outcome> {
  const loadBefore = loadAverage();
  const started = Date.now();
  const tsx = path.join(root, ".tools", "node_modules", ".bin", "tsx");
  const command = existsSync(tsx) ? tsx : "tsx";
  return new Promise((resolve, reject) => {
    const child = spawn(
      "bash",
      [
        "-c",
        // `times` on fd 3, apart from the benchmark's own output: its CPU time (and its children's).
        '"$@" 3>&-; rc=$?; times >&3; exit $rc',
        "bash",
        command,
        path.join("bench", benchmark.script),
        ...(benchmark.args ?? []),
      ],
      {
        cwd: root,
        env: { ...process.env, ...benchmark.env },
        stdio: ["ignore", "pipe", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let times = "";
    child.stdio[3]?.on("data", (chunk: Buffer) => {
      times += chunk.toString();
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      process.stdout.write(chunk);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      process.stderr.write(chunk);
    });
    child.once("error", reject);
    child.once("close", (exitCode) => {
      let targets = parseTargets(stdout);
      if (targets.length === 0) {
        // A benchmark without target lines: each line that gives a verdict, as it printed it.
        targets = stdout
          .split("\n")
          .filter((line) => /\b(PASS|MISS)\b/.test(line))
          .map((line) => ({
            benchmark: benchmark.name,
            target: line.trim().replace(/\s+/g, " ").slice(0, 110),
            measured: "(see its line)",
            verdict: /\bMISS\b/.test(line) ? "MISS" : "PASS",
          }));
      }
      resolve({
        benchmark,
        exitCode,
        wallMs: Date.now() - started,
        cpuMs: childrenCpuMs(times),
        loadBefore,
        loadAfter: loadAverage(),
        targets,
      });
    });
  });
}

const outcomes: Outcome[] = [];
const notRun: string[] = [];
const allStarted = Date.now();
const loadAtStart = loadAverage();
for (const benchmark of BENCHMARKS) {
  if ((only && !only.includes(benchmark.name)) || skipped.has(benchmark.name)) continue;
  if (benchmark.skip) {
    notRun.push(`${benchmark.name} (${benchmark.skip})`);
    continue;
  }
  console.log(
    `\n=== ${benchmark.name} ${[...(benchmark.args ?? []), ...Object.entries(benchmark.env ?? {}).map(([k, v]) => `${k}=${v}`)].join(" ")}; load ${loadAverage()}`,
  );
  outcomes.push(await runBenchmark(benchmark));
}

const s = (msValue: number) => `${(msValue / 1000).toFixed(1)} s`;
console.log(
  `\n=== summary (${new Date().toISOString()}; load at the start ${loadAtStart}, at the end ${loadAverage()}; ${s(Date.now() - allStarted)} in all)`,
);
console.log(
  renderTable(
    ["benchmark", "wall", "cpu", "load before -> after", "exit"],
    outcomes.map((o) => [
      o.benchmark.name,
      s(o.wallMs),
      s(o.cpuMs),
      `${o.loadBefore} -> ${o.loadAfter}`,
      String(o.exitCode),
    ]),
  ),
);
console.log("");
const rows = outcomes.flatMap((o) =>
  o.targets.length > 0
    ? o.targets.map((t) => [o.benchmark.name, t.target, t.measured, t.verdict])
    : [[o.benchmark.name, "(no target printed)", "-", o.exitCode === 0 ? "-" : "FAILED"]],
);
console.log(renderTable(["benchmark", "target", "measured", "result"], rows));
if (notRun.length > 0) console.log(`not run: ${notRun.join(", ")}`);
const failed = outcomes.filter((o) => o.exitCode !== 0);
if (failed.length > 0) {
  console.log(
    `failed: ${failed.map((o) => `${o.benchmark.name} (exit ${String(o.exitCode)})`).join(", ")}`,
  );
  process.exitCode = 1;
}
