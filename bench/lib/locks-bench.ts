// (e) Directory-merge lock cost: uncontended acquire+release, and contention between OS
// processes hammering one target (throughput, wait p50/p99).
import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { DirectoryMergeLocks } from "@copyback/core";
import { median, percentile } from "./stats";

const HAMMER = fileURLToPath(new URL("./lock-hammer.ts", import.meta.url));

export interface UncontendedResult {
  iterations: number;
  firstMs: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
}

export async function benchUncontended(
  work: string,
  iterations = 1000,
): Promise<UncontendedResult> {
  const home = path.join(work, "lock-home");
  const target = path.join(work, "lock-target");
  await mkdir(home, { recursive: true, mode: 0o700 });
  await mkdir(target, { recursive: true });
  const locks = new DirectoryMergeLocks({ instanceRoot: home });
  // The first acquire creates the lock file and checks the filesystem: reported apart.
  const t0 = performance.now();
  await (await locks.acquire(target)).release();
  const firstMs = performance.now() - t0;
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    const lease = await locks.acquire(target);
    await lease.release();
    samples.push(performance.now() - started);
  }
  return {
    iterations,
    firstMs,
    medianMs: median(samples),
    p99Ms: percentile(samples, 99),
    maxMs: Math.max(...samples),
  };
}

export interface ContendedResult {
  processes: number;
  durationMs: number;
  holdMs: number;
  acquisitions: number;
  perSecond: number;
  perProcess: number[];
  waitP50Ms: number;
  waitP99Ms: number;
  waitMaxMs: number;
}

export async function benchContended(
  work: string,
  opts: { processes?: number; durationMs?: number; holdMs?: number } = {},
): Promise<ContendedResult> {
  const processes = opts.processes ?? 4;
  const durationMs = opts.durationMs ?? 5_000;
  const holdMs = opts.holdMs ?? 0;
  const home = path.join(work, "lock-home");
  const target = path.join(work, "lock-target-contended");
  await mkdir(home, { recursive: true, mode: 0o700 });
  await mkdir(target, { recursive: true });
  const children = Array.from({ length: processes }, () => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        HAMMER,
        JSON.stringify({ instanceRoot: home, target, durationMs, holdMs }),
      ],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    let out = "";
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("ready\n")) resolve();
      });
      child.on("exit", (code) => reject(new Error(`lock hammer exited early (${code})`)));
    });
    const done = new Promise<{ count: number; waits: number[] }>((resolve, reject) => {
      child.on("exit", (code) => {
        if (code !== 0) return reject(new Error(`lock hammer failed (${code})`));
        const last = out.trim().split("\n").pop() ?? "{}";
        resolve(JSON.parse(last) as { count: number; waits: number[] });
      });
    });
    done.catch(() => undefined);
    return { child, ready, done };
  });
  await Promise.all(children.map((c) => c.ready));
  for (const c of children) c.child.stdin.write("go\n");
  const results = await Promise.all(children.map((c) => c.done));
  const waits = results.flatMap((r) => r.waits);
  const acquisitions = results.reduce((s, r) => s + r.count, 0);
  return {
    processes,
    durationMs,
    holdMs,
    acquisitions,
    perSecond: acquisitions / (durationMs / 1000),
    perProcess: results.map((r) => r.count),
    waitP50Ms: median(waits),
    waitP99Ms: percentile(waits, 99),
    waitMaxMs: Math.max(...waits),
  };
}
