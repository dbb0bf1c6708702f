// Directory-merge locks between real OS processes (node --import tsx fixtures/lock-child.ts).
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DirectoryMergeLocks, LockTimeoutError, hashTarget, listLocks } from "../../src/copyback/locks";
import { forkLockChild, tempDir, waitUntil, type LockChild } from "./helpers";

let dir: string;
let cleanup: () => Promise<void>;
let instanceRoot: string;
let target: string;
let log: string;
const children: LockChild[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("mp"));
  instanceRoot = path.join(dir, "instance");
  target = path.join(dir, "workspace");
  log = path.join(dir, "critical.log");
  mkdirSync(target);
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL");
  await cleanup();
});

const spawn = (args: Record<string, unknown>) => {
  const child = forkLockChild({ instanceRoot, target, log, ...args });
  children.push(child);
  return child;
};
const sidecarPath = () => path.join(instanceRoot, "locks", "directory-merge", `${hashTarget(realpathSync(target))}.lock.owner.json`);

interface Section {
  id: string;
  enter: bigint;
  exit: bigint;
}

/** Reads the external log; throws on any interleaving (an enter before the previous exit). */
function criticalSections(file: string): Section[] {
  const sections: Section[] = [];
  let open: { id: string; enter: bigint } | null = null;
  for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) {
    const [kind, id, ns] = line.split(" ") as [string, string, string];
    if (kind === "enter") {
      if (open) throw new Error(`overlap: ${id} entered while ${open.id} was inside`);
      open = { id, enter: BigInt(ns) };
    } else {
      if (!open || open.id !== id) throw new Error(`exit of ${id} without its enter`);
      sections.push({ id, enter: open.enter, exit: BigInt(ns) });
      open = null;
    }
  }
  if (open) throw new Error(`${open.id} never left`);
  for (let i = 1; i < sections.length; i += 1) {
    if (sections[i]!.enter < sections[i - 1]!.exit) throw new Error(`overlap by timestamps between ${sections[i - 1]!.id} and ${sections[i]!.id}`);
  }
  return sections;
}

describe("R-LK-2: mutual exclusion between processes", () => {
  it.each([
    [2, 10],
    [16, 3],
  ])("R-LK-2: %i processes contending on one target never overlap and all succeed", async (processes, iterations) => {
    const kids = Array.from({ length: processes }, (_, i) => spawn({ mode: "contend", id: `p${i}`, iterations, holdMs: 10, barrier: true }));
    await Promise.all(kids.map((k) => k.waitFor("ready", 60_000)));
    for (const kid of kids) kid.process.send("go"); // all start contending at once
    const codes = await Promise.all(kids.map((k) => k.exited));
    expect(codes).toEqual(kids.map(() => 0));
    const sections = criticalSections(log);
    expect(sections).toHaveLength(processes * iterations);
    for (let i = 0; i < processes; i += 1) expect(sections.filter((s) => s.id === `p${i}`)).toHaveLength(iterations);
    expect(existsSync(sidecarPath())).toBe(false);
  }, 180_000);

  it("R-LK-2: SIGKILL of the holder releases the lock within milliseconds", async () => {
    const holder = spawn({ mode: "hold" });
    await holder.waitFor("held");
    const locks = new DirectoryMergeLocks({ instanceRoot, timeoutMs: 20_000, pollIntervalMs: 5, maxPollIntervalMs: 20 });
    let acquired = false;
    const waiting = locks.acquire(target).then((lease) => ((acquired = true), lease));
    await new Promise((r) => setTimeout(r, 200));
    expect(acquired).toBe(false); // really blocked by the live holder
    const killedAt = performance.now();
    holder.process.kill("SIGKILL");
    const lease = await waiting;
    const latency = performance.now() - killedAt;
    console.log(`lock acquired ${latency.toFixed(1)} ms after SIGKILL of the holder`);
    expect(await holder.exited).toBe("SIGKILL");
    expect(latency).toBeLessThan(2_000);
    // the dead holder's stale sidecar was replaced by ours
    expect(JSON.parse(readFileSync(sidecarPath(), "utf8"))).toMatchObject({ pid: process.pid });
    await lease.release();
  }, 60_000);

  it("R-LK-2: a waiter on another process's lock keeps the event loop running and times out on schedule", async () => {
    const holder = spawn({ mode: "hold" });
    await holder.waitFor("held");
    const locks = new DirectoryMergeLocks({ instanceRoot, pollIntervalMs: 5 });
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 5);
    const started = performance.now();
    const error = await locks.acquire(target, { timeoutMs: 500 }).catch((e: unknown) => e);
    const waited = performance.now() - started;
    clearInterval(ticker);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect((error as LockTimeoutError).diagnostics).toMatchObject({ reason: "held", owner: { status: "valid", pid: holder.process.pid } });
    expect(waited).toBeGreaterThanOrEqual(495);
    expect(waited).toBeLessThan(2_500);
    expect(ticks).toBeGreaterThan(25);
    holder.process.send("release");
    await holder.waitFor("released");
  }, 60_000);

  it("R-LK-2: independent targets proceed in parallel across processes", async () => {
    const holder = spawn({ mode: "hold" });
    await holder.waitFor("held");
    const other = path.join(dir, "other");
    mkdirSync(other);
    const lease = await new DirectoryMergeLocks({ instanceRoot }).acquire(other, { timeoutMs: 0 });
    await lease.release();
  }, 60_000);
});

describe("R-LK-3: forged or stale sidecars grant nothing", () => {
  const forgeries: Array<[string, () => string | Buffer, string]> = [
    ["this process's pid", () => JSON.stringify({ pid: process.pid, createdAt: new Date().toISOString() }), "valid"],
    ["a dead pid", () => JSON.stringify({ pid: 999_999_999, createdAt: "2001-01-01T00:00:00Z" }), "valid"],
    ["garbage", () => "{\u0000garbage", "invalid"],
    ["a huge file", () => Buffer.alloc(8 * 1024 * 1024, 0x20), "oversized"],
  ];

  it("R-LK-3: with a real holder, every forged sidecar still leaves the contender waiting until it times out", async () => {
    const holder = spawn({ mode: "hold" });
    await holder.waitFor("held");
    const locks = new DirectoryMergeLocks({ instanceRoot, pollIntervalMs: 5 });
    for (const [label, content, status] of forgeries) {
      writeFileSync(sidecarPath(), content());
      const error = await locks.acquire(target, { timeoutMs: 250 }).catch((e: unknown) => e);
      expect(error, label).toBeInstanceOf(LockTimeoutError);
      expect((error as LockTimeoutError).diagnostics.owner.status, label).toBe(status);
      expect((error as LockTimeoutError).message.length, label).toBeLessThan(600); // bounded
    }
    holder.process.send("release");
    await holder.waitFor("released");
    const lease = await locks.acquire(target, { timeoutMs: 5_000 });
    await lease.release();
  }, 60_000);
});

describe("fairness", () => {
  it("R-LK-2: an early waiter is not starved by a stream of later waiters from other processes", async () => {
    const locks = new DirectoryMergeLocks({ instanceRoot, pollIntervalMs: 5 });
    const holder = await locks.acquire(target);
    const early = spawn({ mode: "once", id: "early", holdMs: 5, pollIntervalMs: 50 }); // a slow poller
    await waitUntil(async () => (await listLocks(instanceRoot)).locks[0]?.waiters === 1, 30_000, "the early waiter's ticket");
    const later = [0, 1, 2, 3].map((i) => spawn({ mode: "contend", id: `later${i}`, iterations: 4, holdMs: 2, pollIntervalMs: 1 }));
    await waitUntil(async () => ((await listLocks(instanceRoot)).locks[0]?.waiters ?? 0) >= 5, 30_000, "the later waiters' tickets");
    await holder.release();
    expect(await early.exited).toBe(0);
    expect(await Promise.all(later.map((k) => k.exited))).toEqual([0, 0, 0, 0]);
    const lines = readFileSync(log, "utf8").split("\n").filter(Boolean);
    expect(lines[0]).toMatch(/^acquired early /);
    expect(lines.filter((l) => l.startsWith("enter"))).toHaveLength(16);
  }, 120_000);
});

describe("listLocks across processes", () => {
  it("reports a lock held by another process with its sidecar, and free after release", async () => {
    const holder = spawn({ mode: "hold" });
    await holder.waitFor("held");
    const held = await listLocks(instanceRoot);
    expect(held.locks).toHaveLength(1);
    expect(held.locks[0]).toMatchObject({ state: "held", owner: { status: "valid", pid: holder.process.pid, target: realpathSync(target) } });
    holder.process.send("release");
    await holder.waitFor("released");
    expect((await listLocks(instanceRoot)).locks[0]).toMatchObject({ state: "free", owner: { status: "absent" } });
  }, 60_000);
});
