import { existsSync, mkdirSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DirectoryMergeLocks, hashTarget, listLocks } from "../../src/copyback/locks";
import { tempDir } from "./helpers";

let dir: string;
let cleanup: () => Promise<void>;
let instanceRoot: string;
let lockRoot: string;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("list"));
  instanceRoot = path.join(dir, "instance");
  lockRoot = path.join(instanceRoot, "locks", "directory-merge");
});
afterEach(() => cleanup());

const workspace = (name: string) => {
  const p = path.join(dir, name);
  mkdirSync(p, { recursive: true });
  return p;
};

describe("listLocks", () => {
  it("reports nothing, and creates nothing, for an instance without a lock root", async () => {
    const listing = await listLocks(instanceRoot);
    expect(listing).toMatchObject({ exists: false, rootProblem: null, locks: [], legacyDirectories: [], strayNames: [] });
    expect(existsSync(instanceRoot)).toBe(false);
  });

  it("probes the real lock: held while a lease is open (even in this process), free after release", async () => {
    const a = workspace("a");
    const b = workspace("b");
    const locks = new DirectoryMergeLocks({ instanceRoot });
    const lease = await locks.acquire(a);
    await (await locks.acquire(b)).release();

    const held = await listLocks(instanceRoot);
    const byHash = new Map(held.locks.map((l) => [l.hash, l]));
    expect(byHash.get(hashTarget(realpathSync(a)))).toMatchObject({ state: "held", owner: { status: "valid", pid: process.pid, target: realpathSync(a) }, legacyDirectory: false });
    expect(byHash.get(hashTarget(realpathSync(b)))).toMatchObject({ state: "free", owner: { status: "absent" } });
    lease.assertHeld(); // probing did not disturb the holder's lock

    await lease.release();
    expect((await listLocks(instanceRoot)).locks.every((l) => l.state === "free")).toBe(true);
  });

  it("R-LK-3: a forged sidecar on a free lock is shown as a claim while the probe says free", async () => {
    const a = workspace("a");
    await (await new DirectoryMergeLocks({ instanceRoot }).acquire(a)).release();
    const hash = hashTarget(realpathSync(a));
    writeFileSync(path.join(lockRoot, `${hash}.lock.owner.json`), JSON.stringify({ pid: 1, createdAt: "2020-01-01T00:00:00Z" }));
    expect((await listLocks(instanceRoot)).locks[0]).toMatchObject({ hash, state: "free", owner: { status: "valid", pid: 1 } });
  });

  it("lists legacy directories with their bounded owner record, refused lock files by code, and stray names", async () => {
    mkdirSync(lockRoot, { recursive: true, mode: 0o700 });
    const legacyHash = "a".repeat(64);
    mkdirSync(path.join(lockRoot, `${legacyHash}.lock`));
    writeFileSync(path.join(lockRoot, `${legacyHash}.lock`, "owner.json"), JSON.stringify({ pid: 4242, createdAt: "2020-01-01T00:00:00Z" }));
    const symlinkHash = "b".repeat(64);
    writeFileSync(path.join(dir, "victim"), "x");
    symlinkSync(path.join(dir, "victim"), path.join(lockRoot, `${symlinkHash}.lock.sqlite`));
    writeFileSync(path.join(lockRoot, "notes.txt"), "operator notes");

    const listing = await listLocks(instanceRoot);
    expect(listing.legacyDirectories).toEqual([
      expect.objectContaining({ hash: legacyHash, name: `locks/directory-merge/${legacyHash}.lock/`, isDirectory: true, owner: expect.objectContaining({ status: "valid", pid: 4242 }) }),
    ]);
    expect(listing.locks).toEqual([expect.objectContaining({ hash: symlinkHash, state: "refused", refusal: expect.objectContaining({ code: "lock_file_symlink" }) })]);
    expect(listing.strayNames).toEqual(["notes.txt"]);
    expect(readdirSync(lockRoot).sort()).toEqual([`${legacyHash}.lock`, `${symlinkHash}.lock.sqlite`, "notes.txt"].sort());
  });

  it("reports a symlinked lock root as a problem without following it", async () => {
    const elsewhere = workspace("elsewhere");
    mkdirSync(path.join(instanceRoot, "locks"), { recursive: true, mode: 0o700 });
    symlinkSync(elsewhere, lockRoot);
    const listing = await listLocks(instanceRoot);
    expect(listing).toMatchObject({ exists: false, rootProblem: { code: "lock_root_symlink" }, locks: [] });
    rmSync(lockRoot);
  });
});
