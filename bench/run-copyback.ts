// `pnpm bench:run-copyback`: the copyback of real runs, through the product path: a
// run on the `local` provider driven by executeRun exactly as the worker drives it (wake, claim,
// acquire, seed with the stat cache, agent process, result, finalizeRun, release), measured from
// the run's `result.accepted` event to its `run.committed` event, in one run beside what a user
// would otherwise run on the same trees (issue 24's references). Figures only; nothing asserted.
//
//   (a) tar       `tar | tar && sync` of the generated tree into a fresh directory (for information)
//   (a') floor    the serialized floor: `tar -cf SPOOL .` (SPOOL in /dev/shm; with --large on the
//                 tree's filesystem, as 5 GiB cannot be held in memory), then `tar -xf SPOOL && sync`
//                 into a fresh directory: the least a validate-then-extract design (R-UA-2: the
//                 whole archive validated before anything is extracted) can cost with tar itself.
//                 Target: (b) <= 1.0x (a'), the median of the per-pair ratios.
//   (b) full      an empty host workspace; the agent copies the tree into its sandbox (and syncs,
//                 so the window starts with nothing dirty, as (a) does after settle()): the whole
//                 tree comes back (through the delta export: the baseline is empty, so every entry
//                 is changed and carried)
//   (c) 10 files  the host holds the tree; the agent appends to 10 files (and syncs: the seed's
//                 writes are flushed before the window opens, as in a run whose seed is minutes old)
//   (d) unchanged the host holds the tree; the agent changes nothing (and syncs, as (c))
//   (c') (d')     `rsync -a --delete SANDBOX/ HOST/ && sync` of the same change: HOST a fresh copy
//                 of the tree (cp -a, beside the copyback's host on the same filesystem), SANDBOX a
//                 fresh copy with the same 10 appends; (d') is the same rsync again once the two are
//                 equal (rsync's quick check alone). Targets: (c) <= 0.5x (c'), (d) <= 0.5x (d'),
//                 medians of the per-pair ratios; each pair alternates its order by round.
// Each run's log says which export it took (`workspace.exported`: delta or full, bytes, entries);
// the run is checked to have committed and (b) that the host equals the tree (`diff -r`).
// CPU time: this process's (user + system, all threads) over the same window, sampled every
// 5 ms and interpolated at the two events' timestamps; tar's is its two processes' own.
//
// Memory: this process is the one doing the copyback (executeRun runs in it, as in the worker).
// The sampler also reads its resident set every 5 ms: "copyback RSS" is the largest sample inside
// the window; "run peak" is the kernel's own peak (VmHWM), reset through /proc/self/clear_refs
// before each run, so it covers that run alone (seed and agent included) and misses no spike.
//
// The tar baseline: tar's own time follows the filesystem's state (the root fs is ext4
// mounted with `discard`; tar -x's system time moved between 0.45 and 3.4 s in one session), so
// (a) and (b) are measured in pairs and judged by the median of the per-pair ratios, not by one
// tar against one copyback (the same for the floor and rsync). Fair to all: each round starts after the previous round's trees were
// removed and `sync` flushed (with their discards); both read a warm source (tar the generated
// tree, the copyback the sandbox its agent just wrote and synced); both write into a fresh, empty
// directory on the same filesystem, and both create their inodes in the same parent directory:
// tar extracts into `<instanceRoot>/staging/tar-dst-N` (the floor into `floor-dst-N`), beside the copyback's own staging
// directories (`staging/<run>-<attempt>`, whose files the merge renames into the host). Where a
// new directory lands decides the cost of every file created in it here: on this machine's ext4
// (no journal) creating 3,000 empty files took 2.9 s of system time in a fresh `/tmp/x` and 0.2 s
// in a fresh `/tmp/x/a/b` right after (2026-12-02); with tar's destination at `work/tar-dst-N`
// and the copyback's files under `work/home/staging/`, tar's system time grew from 0.8 to 9 s
// over one benchmark while the copyback's stayed near 1.5 s. All end durable (tar and rsync with `sync`, the copyback with its
// fsyncs or syncfs); each reference's tree is removed and synced right after it is measured; the
// order within a pair alternates (a round runs floor, full, tar in even rounds and tar, full, floor
// in odd ones, so each (reference, full) pair swaps its order each round; likewise rsync and the
// copyback in (c) and (d)), so whatever the first measurement leaves the second one (dirty state,
// cache, discards) weighs on both alike. One warm-up round (--warmup=N; default 1, 0 with
// --large) runs first and is not counted: a worker's process is warm, and the first delta
// copyback of a process pays V8's JIT warm-up. The load average is printed at the start and the
// end; CPU times are printed beside the wall times (they move less with the load).
//
// Options: --files=N (default 10,000), --mib=N (default 200), --runs=N (default 1), --keep,
// --timeline (each run's events after result.accepted, with their offsets and the largest RSS
// sampled since the event before), --profile=DIR (a V8 CPU profile of each run's executeRun).
// --large: a 5 GiB / 199,000-file workspace (199,540 entries: the archive limit is 200,000) and
// only (a), (a') and (b), with the peak RSS against the 512 MiB target (RSS_TARGET_MIB) as PASS/MISS
// and each phase's peak (seed, agent, ownership, export, merge, commit, release: the largest RSS
// sampled between the events that bound it; VmHWM covers the whole run).
// Each target is also printed as a `target | ...` line (lib/targets.ts) for `pnpm bench:all`.
// The agents run without bubblewrap (isolation "none") so that (b)'s agent can read the source
// tree; isolation changes how the agent runs, not how its files come back.
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { appendFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { Session } from "node:inspector";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { createPrismaClient, type PrismaClient } from "@copyback/db/client";
import { DirectoryMergeLocks } from "@copyback/core";
import { executeRun, type ExecuteRunDeps, claimQueuedRuns } from "@copyback/core/dispatch";
import { readProcessIdentity } from "@copyback/core/process";
import { STAGING_ROOT_RELATIVE } from "@copyback/core/finalization";
import { createLocalProvider, ProviderRegistry } from "@copyback/core/providers";
import { SYSTEM_ACTOR } from "@copyback/core/records";
import { wakeAgent } from "@copyback/core/runs";
import { createBenchDatabase } from "./lib/bench-database";
import { rsyncReference, serializedFloor, tarPipeline, settle } from "./lib/pipeline";
import { median, ms, peakRssMiB, renderTable } from "./lib/stats";
import { forkGenerate } from "./lib/generate-child";
import { prng } from "./lib/workspace";
import { printTarget } from "./lib/targets";

const run = promisify(execFile);
const option = (name: string, fallback: number) => {
  const raw = process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < 1) throw new Error(`--${name} must be a positive number, got ${raw}`);
  return value;
};
const LARGE = process.argv.includes("--large");
const FILES = Math.round(option("files", LARGE ? 199_000 : 10_000));
const MIB = option("mib", LARGE ? 5 * 1024 : 200);
/** One copyback of a 5 GiB / 200,000-entry workspace stays under this peak RSS. */
const RSS_TARGET_MIB = 512;
const RUNS = Math.round(option("runs", 1));
/** Rounds run before the counted ones and left out of every figure (a negative count is refused). */
const WARMUP = (() => {
  const raw = process.argv.find((a) => a.startsWith("--warmup="))?.slice("--warmup=".length);
  const value = raw === undefined ? (LARGE ? 0 : 1) : Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--warmup must be a whole number >= 0, got ${raw}`);
  return value;
})();
const KEEP = process.argv.includes("--keep");
const TIMELINE = process.argv.includes("--timeline");
/** --profile=DIR: a V8 CPU profile of this process over each run (executeRun), one file per run. */
const PROFILE_DIR = process.argv.find((a) => a.startsWith("--profile="))?.slice("--profile=".length);
const RESULT = JSON.stringify({ schema: "copyback.run-result.v1", outcome: "in_review", summary: "Benchmark turn." });
const submit = `printf '%s' '${RESULT}' > "$COPYBACK_RESULT_FILE"`;
/**
 * `rm -rf` in a child process: fs.rm of a 199,000-entry tree grows this process's heap by a few
 * hundred MiB that V8 keeps, and the next run's memory would start from there.
 */
const removeTree = (dir: string) => run("rm", ["-rf", "--", dir]);
const mib = (value: number) => `${value.toFixed(0)} MiB`;
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(" ");

const MiB = 2 ** 20;

/** The kernel's peak resident set of this process (VmHWM), in MiB. */
function highWaterMiB(): number {
  const kib = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
  return kib === undefined ? Number.NaN : Number(kib) / 1024;
}

/** Starts VmHWM again from the current resident set (Linux: "5" into clear_refs). */
function resetHighWater(): void {
  try {
    writeFileSync("/proc/self/clear_refs", "5");
  } catch {
    // Not Linux or not allowed: VmHWM then stays the process's lifetime peak (an upper bound).
  }
}

/** This process's CPU time and resident set, sampled, so a window between two run events can be read off. */
class CpuSampler {
  private readonly samples: { at: number; cpuMs: number; rssMiB: number }[] = [];
  private readonly timer = setInterval(() => this.sample(), 5);
  constructor() {
    this.sample();
  }
  private sample(): void {
    const used = process.cpuUsage();
    this.samples.push({ at: Date.now(), cpuMs: (used.user + used.system) / 1000, rssMiB: process.memoryUsage.rss() / MiB });
    if (this.samples.length > 200_000) this.samples.splice(0, 100_000);
  }
  /** The largest resident set sampled in [from, to]. */
  peakRss(from: number, to: number): number {
    let peak = 0;
    for (const s of this.samples) if (s.at >= from && s.at <= to && s.rssMiB > peak) peak = s.rssMiB;
    return peak;
  }
  at(time: number): number {
    this.sample();
    const s = this.samples;
    const hi = s.findIndex((x) => x.at >= time);
    if (hi <= 0) return (s[hi === -1 ? s.length - 1 : 0] as { cpuMs: number }).cpuMs;
    const a = s[hi - 1] as { at: number; cpuMs: number };
    const b = s[hi] as { at: number; cpuMs: number };
    return b.at === a.at ? b.cpuMs : a.cpuMs + ((b.cpuMs - a.cpuMs) * (time - a.at)) / (b.at - a.at);
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

/** The inspector's CPU profiler over this process (the main thread; writer threads are not in it). */
async function startProfile(): Promise<{ stop(file: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) => new Promise<unknown>((resolve, reject) => session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result))));
  await post("Profiler.enable");
  await post("Profiler.setSamplingInterval", { interval: 200 });
  await post("Profiler.start");
  return {
    async stop(file) {
      const { profile } = (await post("Profiler.stop")) as { profile: unknown };
      session.disconnect();
      await mkdir(path.dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
    },
  };
}

interface RunFigure {
  ms: number;
  /** accepted -> export_started (ownership, coordinator), export_started -> merged (the copyback), merged -> committed (arbitration, commit). */
  /** The window's parts: own (to export_started), export (to workspace.exported), merge (to workspace.merged), commit. */
  split: [number, number, number, number];
  cpuMs: number;
  /** Largest RSS sampled in the window, and the kernel's peak over the whole run (MiB). */
  rssMiB: number;
  runPeakMiB: number;
  /** This process's RSS when the run was started (what it held before any of the run's work). */
  rssBeforeMiB: number;
  exportPath: string;
  exported: Record<string, unknown>;
  /** The largest RSS sampled in each phase of the whole run, between the events that bound it (MiB). */
  phases: [string, number][];
}

/**
 * The phases of one run, each bounded by the event that ends the one before it (the run's start
 * is the wake, its end the end of executeRun): seed = everything up to workspace.prepared
 * (claim, lease, seed with the stat cache), agent = the agent process up to its result.
 */
const PHASES: [string, string][] = [
  ["seed", "workspace.prepared"],
  ["agent", "result.accepted"],
  ["ownership", "workspace.export_started"],
  ["export", "workspace.exported"],
  ["merge", "workspace.merged"],
  ["commit", "run.committed"],
  ["release", "lease.released"],
];

/** Each phase's largest sampled RSS, the worst over the runs given. */
function phaseLine(figures: RunFigure | RunFigure[]): string {
  const list = Array.isArray(figures) ? figures : [figures];
  const worst = new Map<string, number>();
  for (const f of list) for (const [phase, peak] of f.phases) worst.set(phase, Math.max(worst.get(phase) ?? 0, peak));
  return [...worst].map(([phase, peak]) => `${phase} ${peak > 0 ? mib(peak) : "-"}`).join(", ");
}

async function main(): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), "copyback-run-bench-"));
  const database = await createBenchDatabase("run_copyback");
  const db: PrismaClient = createPrismaClient({ databaseUrl: database.url, poolSize: 6, applicationName: "copyback-bench" });
  const cpu = new CpuSampler();
  const loadAtStart = load();
  console.log(`run copyback benchmark in ${work}; database ${database.name} on ${database.server}; ${RUNS} run(s) per figure after ${WARMUP} warm-up round(s); node ${process.version}; ${os.cpus().length} CPUs; load ${loadAtStart}`);
  try {
    const src = path.join(work, "src");
    // --large picks no files to edit: its 199,000 paths are not brought into this process.
    const gen = await forkGenerate(src, { files: FILES, totalBytes: Math.round(MIB * MiB), seed: 42 }, { listFiles: !LARGE });
    console.log(`workspace: ${FILES} files, ${gen.directories.length} directories, ${gen.symlinks} symlinks, ${(gen.totalBytes / MiB).toFixed(0)} MiB; load ${load()}`);

    const instanceRoot = path.join(work, "home");
    await mkdir(instanceRoot, { mode: 0o700 });
    const registry = new ProviderRegistry();
    registry.register(createLocalProvider({ instanceRoot, isolation: "none" }));
    const controller = await readProcessIdentity(process.pid);
    if (!controller) throw new Error("no /proc identity for this process");
    const deps: ExecuteRunDeps = { db, registry, instanceRoot, locks: new DirectoryMergeLocks({ instanceRoot }), databaseUrl: database.url, controller };
    const company = await db.company.create({ data: { name: "Run copyback benchmark", issuePrefix: "RCB" } });
    const environment = await db.environment.create({
      data: { companyId: company.id, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "ephemeral" },
    });
    let issues = 0;

    /** One run of `script` against `host`; the window result.accepted -> run.committed. */
    const runOnce = async (host: string, script: string, args: string[] = []): Promise<RunFigure> => {
      issues += 1;
      const workspace = await db.executionWorkspace.upsert({
        where: { companyId_name: { companyId: company.id, name: path.basename(host) } },
        create: { companyId: company.id, name: path.basename(host), hostPath: host },
        update: {},
      });
      const agent = await db.agent.create({
        data: { companyId: company.id, name: `agent-${issues}`, command: ["/bin/sh", "-c", script, "bench", ...args], adapterConfig: { timeoutSeconds: 3600 }, environmentId: environment.id },
      });
      const issue = await db.issue.create({
        data: { companyId: company.id, number: issues, identifier: `RCB-${issues}`, title: `Run ${issues}`, status: "todo", executionWorkspaceId: workspace.id },
      });
      await settle();
      const rssBeforeMiB = process.memoryUsage.rss() / MiB;
      resetHighWater();
      const runStart = Date.now();
      const { runId } = await wakeAgent(db, { companyId: company.id, issueId: issue.id, agentId: agent.id, actor: SYSTEM_ACTOR });
      const claimed = await claimQueuedRuns(db, { limit: 1, controller });
      const mine = claimed.find((c) => c.runId === runId);
      if (!mine) throw new Error(`run ${runId} was not claimed`);
      const profiler = PROFILE_DIR ? await startProfile() : null;
      await executeRun(deps, mine, new AbortController().signal);
      const runEnd = Date.now();
      if (profiler) await profiler.stop(path.join(PROFILE_DIR as string, `run-${issues}.cpuprofile`));
      const runPeakMiB = highWaterMiB();
      const status = (await db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status;
      const events = await db.runEvent.findMany({ where: { runId }, orderBy: { createdAt: "asc" } });
      const at = (code: string) => events.find((e) => e.code === code)?.createdAt.getTime();
      const accepted = at("result.accepted");
      const committed = at("run.committed");
      if (status !== "succeeded" || accepted === undefined || committed === undefined) {
        throw new Error(`run ${runId} did not commit (${status}): ${events.map((e) => e.code).join(", ")}`);
      }
      const started = at("workspace.export_started") ?? accepted;
      const merged = at("workspace.merged") ?? committed;
      if (TIMELINE) {
        // Each event with its offset and the largest RSS sampled since the previous one.
        let previous = accepted;
        const marks = events.filter((e) => e.createdAt.getTime() >= accepted).map((e) => {
          const t = e.createdAt.getTime();
          const mark = `${e.code} +${t - accepted} ms (${mib(cpu.peakRss(previous, t))})`;
          previous = t;
          return mark;
        });
        console.log(`    timeline: ${marks.join(", ")}`);
      }
      const exported = (events.find((e) => e.code === "workspace.exported")?.payload ?? {}) as Record<string, unknown>;
      const phases: [string, number][] = [];
      let from = runStart;
      for (const [phase, endCode] of PHASES) {
        const to = at(endCode) ?? (endCode === "lease.released" ? runEnd : undefined);
        if (to === undefined) continue;
        phases.push([phase, cpu.peakRss(from, to)]);
        from = to;
      }
      phases.push(["after", cpu.peakRss(from, runEnd)]);
      return {
        phases, ms: committed - accepted, split: [started - accepted, (at("workspace.exported") ?? merged) - started, merged - (at("workspace.exported") ?? merged), committed - merged], cpuMs: cpu.at(committed) - cpu.at(accepted), rssMiB: cpu.peakRss(accepted, committed), runPeakMiB, rssBeforeMiB, exportPath: String(exported.path ?? "?"), exported };
    };

    type Reference = { ms: number; cpu: number };
    const tar: Reference[] = [];
    const floor: Reference[] = [];
    const rsyncChanged: Reference[] = [];
    const rsyncUnchanged: Reference[] = [];
    const full: RunFigure[] = [];
    const changed: RunFigure[] = [];
    const unchanged: RunFigure[] = [];
    const rand = prng(7);
    /** Removes a tree and lets `sync` flush its removal (and the filesystem's discards) before anything is measured. */
    const removeAndSettle = async (dir: string) => {
      await removeTree(dir);
      await settle();
    };
    const staging = path.join(instanceRoot, STAGING_ROOT_RELATIVE);
    for (let round = -WARMUP; round < RUNS; round++) {
      const counted = round >= 0;
      const n = round + WARMUP;
      const name = counted ? `run ${round + 1}` : `warm-up ${n + 1}`;
      // Both references extract beside the copyback's own staging directories (see the header).
      const tarDst = path.join(staging, `tar-dst-${n}`);
      const floorDst = path.join(staging, `floor-dst-${n}`);
      // The floor's spool: in memory where the archive fits; a 5 GiB one goes on the tree's filesystem.
      const spool = LARGE ? path.join(work, `spool-${n}.tar`) : path.join("/dev/shm", `copyback-bench-${process.pid}-${n}.tar`);
      const host = path.join(work, `host-${n}`);
      await mkdir(host);
      // (a), (a') and (b) in one round; the full copyback in the middle and the two references on
      // either side of it, swapping sides each round, so each (reference, full) pair alternates its order.
      const floorFirst = n % 2 === 0;
      let pairTar: Reference | undefined;
      let pairFloor: Reference | undefined;
      let pairFull: RunFigure | undefined;
      const measureTar = async () => {
        await mkdir(tarDst, { recursive: true });
        await settle();
        pairTar = await tarPipeline(src, tarDst);
        await removeAndSettle(tarDst);
      };
      const measureFloor = async () => {
        await mkdir(floorDst, { recursive: true });
        await settle();
        pairFloor = await serializedFloor(src, floorDst, spool);
        await removeAndSettle(floorDst);
      };
      const measureFull = async () => {
        // `sync` before the result: the agent's own 200 MiB are flushed before the window opens, as
        // settle() does before (a), so the merge's durability barrier (syncfs) flushes only what the
        // copyback wrote, not the agent's copy too (a real run's writes are minutes old).
        pairFull = await runOnce(host, `cp -a "$1/." . && sync && ${submit}`, [src]);
      };
      for (const measure of floorFirst ? [measureFloor, measureFull, measureTar] : [measureTar, measureFull, measureFloor]) await measure();
      const t = pairTar as Reference;
      const fl = pairFloor as Reference;
      const f = pairFull as RunFigure;
      await run("diff", ["-r", "--no-dereference", src, host]).catch((error: { stdout?: string }) => {
        throw new Error(`(b) the host differs from the tree: ${String(error.stdout ?? error).slice(0, 400)}`);
      });
      if (counted) {
        tar.push(t);
        floor.push(fl);
        full.push(f);
      }

      const line = `  ${name} (${floorFirst ? "floor first" : "tar first"}): floor ${ms(fl.ms)} (CPU ${ms(fl.cpu)}); tar|tar&&sync ${ms(t.ms)} (CPU ${ms(t.cpu)}); full ${ms(f.ms)} (CPU ${ms(f.cpuMs)}; ${f.exportPath}, RSS ${mib(f.rssBeforeMiB)} before the run, copyback ${mib(f.rssMiB)}, run peak ${mib(f.runPeakMiB)}): ${(f.ms / fl.ms).toFixed(2)}x floor, ${(f.ms / t.ms).toFixed(2)}x tar`;
      if (LARGE) {
        console.log(`${line}; peak RSS per phase ${phaseLine(f)}; load ${load()}`);
      } else {
        const picks = Array.from({ length: 10 }, () => (gen.files[Math.floor(rand() * gen.files.length)] as { path: string }).path);
        // rsync's trees, on the same filesystem and beside the host (rsync writes its temporary
        // files in the destination's directories): a host copy of the tree and a sandbox copy with
        // the same 10 appends the agent makes; both copies were just written, so both are warm.
        const rsHost = path.join(work, `rsync-host-${n}`);
        const rsSandbox = path.join(work, `rsync-sandbox-${n}`);
        await run("cp", ["-a", "--", src, rsHost]);
        await run("cp", ["-a", "--", src, rsSandbox]);
        for (const pick of picks) await appendFile(path.join(rsSandbox, pick), "edited by the benchmark\n");
        const rsyncFirst = n % 2 === 0;
        let c: RunFigure | undefined;
        let d: RunFigure | undefined;
        let rc: Reference | undefined;
        let rd: Reference | undefined;
        // `sync` before the result here too: the seed has just written the whole tree into the
        // sandbox, and without it the window would open with those 200 MiB still being written
        // back, so the merge's fsyncs and the database's commits would wait for the seed's
        // writeback (ext4 orders a journal commit after the data of the blocks it allocates). A
        // real run's seed is minutes old when its result arrives.
        const copyback10 = async () => {
          c = await runOnce(host, `for f in "$@"; do printf 'edited by the benchmark\\n' >> "$f" || exit 1; done && sync && ${submit}`, picks);
        };
        const copyback0 = async () => {
          d = await runOnce(host, `sync && ${submit}`);
        };
        const rsync10 = async () => {
          await settle();
          rc = await rsyncReference(rsSandbox, rsHost);
        };
        // After rsync10 the two trees are equal: the second rsync is the unchanged case's quick check.
        const rsync0 = async () => {
          await settle();
          rd = await rsyncReference(rsSandbox, rsHost);
        };
        const order = rsyncFirst ? [rsync10, copyback10, rsync0, copyback0] : [copyback10, rsync10, copyback0, rsync0];
        for (const measure of order) await measure();
        await run("diff", ["-r", "--no-dereference", rsSandbox, rsHost]).catch((error: { stdout?: string }) => {
          throw new Error(`rsync's host differs from its sandbox: ${String(error.stdout ?? error).slice(0, 400)}`);
        });
        await removeTree(rsHost);
        await removeTree(rsSandbox);
        const cc = c as RunFigure;
        const dd = d as RunFigure;
        const rcc = rc as Reference;
        const rdd = rd as Reference;
        if (counted) {
          changed.push(cc);
          unchanged.push(dd);
          rsyncChanged.push(rcc);
          rsyncUnchanged.push(rdd);
        }
        console.log(
          `${line}; 10 files ${ms(cc.ms)} (CPU ${ms(cc.cpuMs)}; ${cc.exportPath}, ${String(cc.exported.changed)} changed, ${String(cc.exported.hashedFiles)} hashed) against rsync ${ms(rcc.ms)} (CPU ${ms(rcc.cpu)}): ${(cc.ms / rcc.ms).toFixed(2)}x; unchanged ${ms(dd.ms)} (CPU ${ms(dd.cpuMs)}; ${dd.exportPath}) against rsync ${ms(rdd.ms)} (CPU ${ms(rdd.cpu)}): ${(dd.ms / rdd.ms).toFixed(2)}x; load ${load()}`,
        );
      }
      await removeAndSettle(host);
    }

    /** The median of the per-pair ratios (each copyback against the reference measured beside it). */
    const pairMedian = (figures: RunFigure[], references: Reference[]) => {
      const ratios = figures.map((r, i) => r.ms / (references[i] as Reference).ms);
      return { ratios, median: median(ratios) };
    };
    const refRow = (label: string, refs: Reference[], target: string) => [label, ms(median(refs.map((r) => r.ms))), "-", ms(median(refs.map((r) => r.cpu))), "-", "-", target, ""];
    const row = (label: string, figures: RunFigure[], target: string, verdict: boolean) => [
      label,
      ms(median(figures.map((r) => r.ms))),
      [0, 1, 2, 3].map((k) => ms(median(figures.map((r) => r.split[k] as number)))).join(" / "),
      ms(median(figures.map((r) => r.cpuMs))),
      `${mib(Math.max(...figures.map((r) => r.rssMiB)))} / ${mib(Math.max(...figures.map((r) => r.runPeakMiB)))}`,
      [...new Set(figures.map((r) => r.exportPath))].join("/"),
      target,
      verdict ? "PASS" : "MISS",
    ];
    const vsFloor = pairMedian(full, floor);
    const vsTar = pairMedian(full, tar);
    const bench = LARGE ? "run-copyback --large" : "run-copyback";
    const size = LARGE ? FILES === 199_000 && MIB === 5 * 1024 : FILES === 10_000 && MIB === 200;
    const sized = size ? "" : ` (${FILES} files / ${MIB} MiB: indicative)`;
    const rows = [
      refRow("(a) tar | tar && sync", tar, "information"),
      refRow("(a') serialized floor", floor, "reference of (b)"),
      row("(b) full copyback", full, `<= 1.0x floor: ${vsFloor.median.toFixed(2)}x (tar|tar: ${vsTar.median.toFixed(2)}x)`, vsFloor.median <= 1),
    ];
    const targets: [string, string, boolean][] = [[`full copyback <= 1.0x serialized floor${sized}`, `${vsFloor.median.toFixed(2)}x (pipelined tar ${vsTar.median.toFixed(2)}x)`, vsFloor.median <= 1]];
    if (!LARGE) {
      const vsRsync10 = pairMedian(changed, rsyncChanged);
      const vsRsync0 = pairMedian(unchanged, rsyncUnchanged);
      rows.push(
        refRow("(c') rsync, 10 files", rsyncChanged, "reference of (c)"),
        row("(c) 10-file change", changed, `<= 0.5x rsync: ${vsRsync10.median.toFixed(2)}x`, vsRsync10.median <= 0.5),
        refRow("(d') rsync, unchanged", rsyncUnchanged, "reference of (d)"),
        row("(d) unchanged", unchanged, `<= 0.5x rsync: ${vsRsync0.median.toFixed(2)}x`, vsRsync0.median <= 0.5),
      );
      targets.push([`10-file change <= 0.5x rsync${sized}`, `${vsRsync10.median.toFixed(2)}x`, vsRsync10.median <= 0.5]);
      targets.push([`unchanged <= 0.5x rsync${sized}`, `${vsRsync0.median.toFixed(2)}x`, vsRsync0.median <= 0.5]);
      console.log(`(c) / (c') per pair: ${vsRsync10.ratios.map((r) => `${r.toFixed(2)}x`).join(", ")}; (d) / (d') per pair: ${vsRsync0.ratios.map((r) => `${r.toFixed(2)}x`).join(", ")}`);
    }
    console.log("\nresult.accepted -> run.committed (medians; own = to workspace.export_started: ownership and coordinator;");
    console.log("copy = export, verification and merge, to workspace.merged; commit = arbitration and commit; cpu = this process, all threads;");
    console.log("rss = largest resident set sampled in the window / the kernel's peak (VmHWM) over the whole run, worst run):");
    console.log(renderTable(["scenario", "wall", "own / export / merge / commit", "cpu", "rss", "export", "target", "result"], rows));
    console.log(`(b) / (a') per pair: ${vsFloor.ratios.map((r) => `${r.toFixed(2)}x`).join(", ")}; (b) / (a) per pair: ${vsTar.ratios.map((r) => `${r.toFixed(2)}x`).join(", ")}; CPU: full ${ms(median(full.map((r) => r.cpuMs)))} against floor ${ms(median(floor.map((r) => r.cpu)))} and tar ${ms(median(tar.map((r) => r.cpu)))}`);
    console.log(`peak RSS per phase of the full copyback (sampled every 5 ms, worst run): ${phaseLine(full)}`);
    const peak = Math.max(...full.map((r) => r.runPeakMiB));
    const memory = `peak RSS of one full copyback run (VmHWM): ${mib(peak)}, target < ${RSS_TARGET_MIB} MiB: ${peak < RSS_TARGET_MIB ? "PASS" : "MISS"}`;
    console.log(`${memory}${LARGE ? "" : " (the target is --large's)"}; lifetime peak of this process ${mib(peakRssMiB())}`);
    if (LARGE) targets.push([`peak RSS < ${RSS_TARGET_MIB} MiB${sized}`, `${mib(peak)} (${phaseLine(full)})`, peak < RSS_TARGET_MIB]);
    const used = process.cpuUsage();
    console.log(`load average (1, 5, 15 min) at the start ${loadAtStart}, at the end ${load()}; CPU time of this process ${ms((used.user + used.system) / 1000)} (the references' own are in their rows)`);
    for (const [target, measured, pass] of targets) printTarget(bench, target, measured, pass);
    if (!size) console.log(`(a ${FILES}-file / ${MIB} MiB tree: the issue's targets are for ${LARGE ? "199,000 files / 5 GiB with --large" : "10,000 files / 200 MiB"}; these verdicts are indicative)`);
  } finally {
    cpu.stop();
    await db.$disconnect();
    await database.drop();
    if (KEEP) console.log(`kept ${work}`);
    else await rm(work, { recursive: true, force: true });
  }
}

await main();
