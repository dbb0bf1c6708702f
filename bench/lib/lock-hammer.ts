// One contender of the contended-lock benchmark, run as its own OS process:
//   node --import tsx bench/lib/lock-hammer.ts '<json args>'
// Prints "ready", waits for "go" on stdin, then acquires and releases the target's lock in a
// loop until the deadline, and prints one JSON line: how many acquisitions and each wait (ms).
import { createInterface } from "node:readline";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { DirectoryMergeLocks } from "@copyback/core";

interface Args {
  instanceRoot: string;
  target: string;
  durationMs: number;
  holdMs: number;
}

const args = JSON.parse(process.argv[2] ?? "{}") as Args;
const locks = new DirectoryMergeLocks({ instanceRoot: args.instanceRoot, timeoutMs: 60_000 });
// Warm the process's connection path once, outside the measurement.
await (await locks.acquire(args.target)).release();

const lines = createInterface({ input: process.stdin });
const go = new Promise<void>((resolve) => lines.on("line", (l) => l.trim() === "go" && resolve()));
process.stdout.write("ready\n");
await go;

const waits: number[] = [];
const deadline = performance.now() + args.durationMs;
while (performance.now() < deadline) {
  const asked = performance.now();
  const lease = await locks.acquire(args.target);
  waits.push(performance.now() - asked);
  if (args.holdMs > 0) await sleep(args.holdMs);
  await lease.release();
}
process.stdout.write(`${JSON.stringify({ pid: process.pid, count: waits.length, waits })}\n`);
lines.close();
