// In-process behaviour of DirectoryMergeLocks. Cross-process exclusion, SIGKILL and fairness
// between processes are in multi-process.test.ts.
import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DirectoryMergeLocks, LockTimeoutError, hashTarget, type DirectoryMergeLease } from "../../src/copyback/locks";
import { tempDir } from "./helpers";

let dir: string;
let cleanup: () => Promise<void>;
let instanceRoot: string;
let target: string;
let lockRoot: string;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("lock"));
  instanceRoot = path.join(dir, "instance");
  target = path.join(dir, "workspace");
  mkdirSync(target);
  lockRoot = path.join(instanceRoot, "locks", "directory-merge");
});
afterEach(() => cleanup());

const hashOf = (t: string) => hashTarget(realpathSync(t));
const locksWith = (timeoutMs = 30_000) => new DirectoryMergeLocks({ instanceRoot, timeoutMs, pollIntervalMs: 5 });

describe("leases", () => {
  it("R-LK-1: the lock file lives at <instanceRoot>/locks/directory-merge/<sha256 of realpath(target)>.lock.sqlite", async () => {
    symlinkSync(target, path.join(dir, "alias"));
    const lease = await locksWith().acquire(path.join(dir, "alias"));
    expect(lease.target).toBe(realpathSync(target));
    expect(lease.hash).toBe(hashOf(target));
    expect(lease.lockFile).toBe(path.join(realpathSync(lockRoot), `${hashOf(target)}.lock.sqlite`));
    expect(lease.held).toBe(true);
    await lease.release();
    expect(lease.held).toBe(false);
  });

  it("R-LK-4: the lock file's inode never changes across acquisitions; the sidecar exists only while held; the lock file stays", async () => {
    const locks = locksWith();
    const lockFile = path.join(lockRoot, `${hashOf(target)}.lock.sqlite`);
    const sidecar = path.join(lockRoot, `${hashOf(target)}.lock.owner.json`);
    const inodes = new Set<number>();
    for (let i = 0; i < 25; i += 1) {
      const lease = await locks.acquire(target);
      inodes.add(lstatSync(lockFile).ino);
      const claim = JSON.parse(readFileSync(sidecar, "utf8")) as Record<string, unknown>;
      expect(claim).toMatchObject({ pid: process.pid, target: realpathSync(target) });
      expect(Date.parse(claim.createdAt as string)).not.toBeNaN();
      await lease.release();
      expect(existsSync(sidecar)).toBe(false);
      expect(lstatSync(lockFile).isFile()).toBe(true);
    }
    expect(inodes.size).toBe(1);
    expect(lstatSync(lockFile).nlink).toBe(1);
  });

  it("R-LK-2: the open transaction alone is the lock: a released lease keeps its connection for reuse but holds nothing", async () => {
    const locks = locksWith();
    const lockFile = path.join(lockRoot, `${hashOf(target)}.lock.sqlite`);
    const canLockFrom = () => {
      const other = new Database(lockFile, { fileMustExist: true, timeout: 0 });
      try {
        other.exec("BEGIN IMMEDIATE");
        other.exec("ROLLBACK");
        return true;
      } catch {
        return false;
      } finally {
        other.close();
      }
    };
    for (let i = 0; i < 3; i += 1) {
      const lease = await locks.acquire(target);
      expect(canLockFrom()).toBe(false);
      await lease.release();
      expect(canLockFrom()).toBe(true);
    }
  });

  it("R-LK-4: a lock file replaced between acquisitions is locked by its new inode, never through a kept connection", async () => {
    const locks = locksWith();
    const first = await locks.acquire(target);
    await first.release();
    // Forbidden by the spec, done here to prove the kept connection is not trusted blindly.
    const moved = path.join(dir, "old.lock.sqlite");
    renameSync(first.lockFile, moved);
    writeFileSync(first.lockFile, "");
    const second = await locks.acquire(target);
    expect(() => second.assertHeld()).not.toThrow();
    const onNew = new Database(first.lockFile, { fileMustExist: true, timeout: 0 });
    const onOld = new Database(moved, { fileMustExist: true, timeout: 0 });
    try {
      expect(() => onNew.exec("BEGIN IMMEDIATE")).toThrow(expect.objectContaining({ code: "SQLITE_BUSY" }));
      expect(() => onOld.exec("BEGIN IMMEDIATE")).not.toThrow();
      onOld.exec("ROLLBACK");
    } finally {
      onNew.close();
      onOld.close();
      await second.release();
    }
  });

  it("R-LK-4: lock files stay for targets that no longer exist", async () => {
    const lease = await locksWith().acquire(target);
    await lease.release();
    rmSync(target, { recursive: true });
    expect(existsSync(lease.lockFile)).toBe(true);
  });

  it("R-LK-2: independent targets proceed concurrently (hold A, take B with no waiting allowed)", async () => {
    const other = path.join(dir, "other");
    mkdirSync(other);
    const locks = locksWith();
    const a = await locks.acquire(target);
    const started = performance.now();
    const b = await locks.acquire(other, { timeoutMs: 0 });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(a.held && b.held).toBe(true);
    await Promise.all([a.release(), b.release()]);
  });

  it("R-LK-2: a waiter does not block the event loop and times out on schedule with bounded diagnostics", async () => {
    const locks = locksWith();
    const holder = await locks.acquire(target);
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 5);
    const started = performance.now();
    const error = await locks.acquire(target, { timeoutMs: 400 }).catch((e: unknown) => e);
    const waited = performance.now() - started;
    clearInterval(ticker);
    await holder.release();

    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ code: "directory_merge_lock_timeout", diagnostics: { reason: "held", lockHash: hashOf(target), timeoutMs: 400, owner: { status: "valid", pid: process.pid } } });
    expect(waited).toBeGreaterThanOrEqual(395);
    expect(waited).toBeLessThan(2_000);
    expect(ticks).toBeGreaterThan(20); // ~80 expected; a blocked loop would give 0-1
    // R-UA-4: no host path in a message that may reach a task's user
    expect((error as Error).message).not.toContain(dir);
    expect(JSON.stringify((error as LockTimeoutError).diagnostics)).not.toContain(dir);
  });

  it("R-LK-2: waiters of one process are admitted in arrival order", async () => {
    const locks = locksWith();
    const holder = await locks.acquire(target);
    const order: number[] = [];
    const waiters = [0, 1, 2, 3, 4].map(async (i) => {
      await new Promise((r) => setTimeout(r, i * 5));
      await locks.withLock(target, async () => {
        order.push(i);
        await new Promise((r) => setTimeout(r, 2));
      });
    });
    await new Promise((r) => setTimeout(r, 60));
    await holder.release();
    await Promise.all(waiters);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it("withLock releases when the callback throws", async () => {
    const locks = locksWith();
    await expect(locks.withLock(target, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    const lease = await locks.acquire(target, { timeoutMs: 0 });
    await lease.release();
  });

  it("an aborted waiter leaves no trace: the next one gets the lock at once", async () => {
    const locks = locksWith();
    const holder = await locks.acquire(target);
    const controller = new AbortController();
    const waiting = locks.acquire(target, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("stop")), 30);
    await expect(waiting).rejects.toMatchObject({ code: "directory_merge_lock_aborted" });
    await holder.release();
    const next = await locks.acquire(target, { timeoutMs: 0 });
    await next.release();
  });

  it("release is idempotent and assertHeld reports a released lease", async () => {
    const lease = await locksWith().acquire(target);
    expect(() => lease.assertHeld()).not.toThrow();
    await lease.release();
    await lease.release();
    expect(() => lease.assertHeld()).toThrow(expect.objectContaining({ code: "directory_merge_lock_not_held" }));
  });

  it("R-LK-4: assertHeld detects a lock file replaced under a holder", async () => {
    const lease: DirectoryMergeLease = await locksWith().acquire(target);
    renameSync(lease.lockFile, `${lease.lockFile}.moved`);
    writeFileSync(lease.lockFile, "");
    expect(() => lease.assertHeld()).toThrow(expect.objectContaining({ code: "lock_file_replaced" }));
    await lease.release();
  });

  it("rejects invalid options and a target overlapping the lock root, changing nothing", async () => {
    expect(() => new DirectoryMergeLocks({ instanceRoot, timeoutMs: -1 })).toThrow(expect.objectContaining({ code: "invalid_lock_option" }));
    expect(() => new DirectoryMergeLocks({ instanceRoot, pollIntervalMs: 0 })).toThrow(expect.objectContaining({ code: "invalid_lock_option" }));
    await expect(locksWith().acquire(instanceRoot)).rejects.toMatchObject({ code: "target_overlaps_lock_root" });
    await expect(locksWith().acquire(path.join(lockRoot, "x"))).rejects.toMatchObject({ code: "target_overlaps_lock_root" });
    expect(readdirNames(lockRoot)).toEqual([]);
  });
});

describe("refused lock files and roots", () => {
  it("a symlink at the lock file's name is refused and its target left untouched", async () => {
    mkdirSync(lockRoot, { recursive: true, mode: 0o700 });
    const victim = path.join(dir, "victim.sqlite");
    writeFileSync(victim, "not yours");
    symlinkSync(victim, path.join(lockRoot, `${hashOf(target)}.lock.sqlite`));
    await expect(locksWith().acquire(target)).rejects.toMatchObject({ code: "lock_file_symlink" });
    expect(readFileSync(victim, "utf8")).toBe("not yours");
    expect(existsSync(path.join(lockRoot, `${hashOf(target)}.lock.owner.json`))).toBe(false);
  });

  it("a hard-linked lock file is refused (a second name could be locked separately)", async () => {
    const lease = await locksWith().acquire(target);
    await lease.release();
    linkSync(lease.lockFile, path.join(dir, "second-name.sqlite"));
    await expect(locksWith().acquire(target)).rejects.toMatchObject({ code: "lock_file_hard_linked" });
    expect(existsSync(path.join(lockRoot, `${hashOf(target)}.lock.owner.json`))).toBe(false);
  });

  it("a directory at the lock file's name is refused", async () => {
    mkdirSync(path.join(lockRoot, `${hashOf(target)}.lock.sqlite`), { recursive: true });
    await expect(locksWith().acquire(target)).rejects.toMatchObject({ code: "lock_file_not_regular" });
  });

  it("a symlinked lock root is refused, and nothing is created behind it", async () => {
    const elsewhere = path.join(dir, "elsewhere");
    mkdirSync(elsewhere, { mode: 0o700 });
    mkdirSync(path.join(instanceRoot, "locks"), { recursive: true, mode: 0o700 });
    symlinkSync(elsewhere, lockRoot);
    await expect(locksWith().acquire(target)).rejects.toMatchObject({ code: "lock_root_symlink" });
    expect(readdirNames(elsewhere)).toEqual([]);
  });
});

describe("R-LK-5: legacy directory locks", () => {
  it("R-LK-5: a legacy <hash>.lock/ blocks admission whatever its PID or age, and the timeout names it with the upgrade steps", async () => {
    const legacy = path.join(lockRoot, `${hashOf(target)}.lock`);
    mkdirSync(legacy, { recursive: true });
    const claims = [
      { pid: 999_999_999, createdAt: "2001-01-01T00:00:00Z" }, // a PID that cannot exist, decades old
      { pid: process.pid, createdAt: new Date().toISOString() }, // "us"
    ];
    for (const claim of claims) {
      writeFileSync(path.join(legacy, "owner.json"), JSON.stringify(claim));
      const error = await locksWith(300)
        .acquire(target)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockTimeoutError);
      const timeout = error as LockTimeoutError;
      expect(timeout.diagnostics).toMatchObject({ reason: "legacy_lock_directory", legacyDirectory: `locks/directory-merge/${hashOf(target)}.lock/` });
      expect(timeout.message).toContain(`locks/directory-merge/${hashOf(target)}.lock/`);
      expect(timeout.message).toMatch(/stop ALL old server and worker processes/);
      expect(timeout.message).toMatch(/never remove \.lock\.sqlite files/);
      expect(timeout.message).not.toContain(dir);
    }
    // an empty legacy directory, or even a plain file at the name, blocks too
    rmSync(path.join(legacy, "owner.json"));
    await expect(locksWith(100).acquire(target)).rejects.toMatchObject({ diagnostics: { reason: "legacy_lock_directory" } });
    // only an operator moving it away lets writers in
    renameSync(legacy, path.join(dir, "scratch-legacy"));
    const lease = await locksWith(0).acquire(target);
    await lease.release();
  });

  it("R-LK-5: a legacy directory appearing while a waiter waits keeps it out", async () => {
    const locks = locksWith();
    const holder = await locks.acquire(target);
    const waiting = locks.acquire(target, { timeoutMs: 500 }).catch((e: unknown) => e);
    mkdirSync(path.join(lockRoot, `${hashOf(target)}.lock`));
    await holder.release();
    expect(await waiting).toMatchObject({ code: "directory_merge_lock_timeout", diagnostics: { reason: "legacy_lock_directory" } });
  });
});

describe("R-LK-3: owner sidecars grant nothing", () => {
  const forgeries: Array<[string, string | Buffer]> = [
    ["this process's pid", JSON.stringify({ pid: process.pid, createdAt: new Date().toISOString() })],
    ["a dead pid", JSON.stringify({ pid: 999_999_999, createdAt: "2001-01-01T00:00:00Z" })],
    ["garbage", "\u0000\u0001{{{not json"],
    ["a huge file", Buffer.alloc(5 * 1024 * 1024, 0x7b)],
  ];

  it.each(forgeries)("R-LK-3: without a holder, a sidecar claiming %s does not stop acquisition, and is replaced by the real owner's", async (_label, content) => {
    mkdirSync(lockRoot, { recursive: true, mode: 0o700 });
    const sidecar = path.join(lockRoot, `${hashOf(target)}.lock.owner.json`);
    writeFileSync(sidecar, content);
    const lease = await locksWith(0).acquire(target);
    expect(JSON.parse(readFileSync(sidecar, "utf8"))).toMatchObject({ pid: process.pid });
    await lease.release();
    expect(existsSync(sidecar)).toBe(false);
  });
});

function readdirNames(p: string): string[] {
  return existsSync(p) ? readdirSync(p).sort() : [];
}
