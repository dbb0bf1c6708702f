// `copyback merge`: validate, extract into <home>/staging, merge under the target's lock, with
// R-RR-1 retries. Real files, real archives (GNU tar), the real engine.
import { cp, lstat, mkdir, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { takeManifest } from "../../src/copyback/manifest/index";
import {
  holdLock,
  hostileArchive,
  parseJson,
  removeTempDirs,
  runCli,
  snapshotTree,
  tarDirectory,
  tempDir,
  writeTree,
  type LockHolder,
} from "./helpers";

const holders: LockHolder[] = [];
afterEach(async () => {
  for (const h of holders.splice(0)) await h.release();
  await removeTempDirs();
});

interface Setup {
  work: string;
  sandbox: string;
  host: string;
  home: string;
  baseline: string;
  archive: string;
}

/** A seeded sandbox and a host holding the same files, the baseline taken at seeding. */
async function setup(): Promise<Setup> {
  const work = await tempDir("merge");
  const sandbox = path.join(work, "sandbox");
  const host = path.join(work, "host");
  await writeTree(sandbox, {
    "a.txt": "alpha\n",
    "d.txt": "to be deleted\n",
    "src/main.ts": "export const x = 1;\n",
    "node_modules/dep/index.js": "module.exports = 1;\n",
  });
  await cp(sandbox, host, { recursive: true });
  const baseline = path.join(work, "baseline.json");
  await writeFile(
    baseline,
    JSON.stringify(await takeManifest(sandbox, { exclude: ["node_modules"] })),
  );
  return {
    work,
    sandbox,
    host,
    home: path.join(work, "home"),
    baseline,
    archive: path.join(work, "snapshot.tar"),
  };
}

function mergeArgs(s: Setup, ...extra: string[]): string[] {
  return [
    "merge",
    "--home",
    s.home,
    "--baseline",
    s.baseline,
    "--archive",
    s.archive,
    "--target",
    s.host,
    "--exclude",
    "node_modules",
    ...extra,
  ];
}

async function stagingLeft(home: string): Promise<string[]> {
  return readdir(path.join(home, "staging")).catch(() => []);
}

// Lock holders are separate tsx processes: their start alone can take seconds on a busy machine.
describe("copyback merge", { timeout: 30_000 }, () => {
  it("applies the sandbox's changes durably and reports the counts (exit 0)", async () => {
    const s = await setup();
    await writeTree(s.sandbox, { "a.txt": "alpha, edited\n", "new/c.txt": "created\n" });
    await rm(path.join(s.sandbox, "d.txt"));
    tarDirectory(s.sandbox, s.archive, ["--exclude", "./node_modules"]);

    const run = await runCli(mergeArgs(s));
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^applied: 3 written, 1 deleted/);
    expect(await snapshotTree(s.host)).toEqual(await snapshotTree(s.sandbox));
    // The private staging area is created 0700 and left empty.
    expect((await lstat(s.home)).mode & 0o777).toBe(0o700);
    expect((await lstat(path.join(s.home, "staging"))).mode & 0o777).toBe(0o700);
    expect(await stagingLeft(s.home)).toEqual([]);
  });

  it("--json: outcome, attempts, counts and the written/deleted paths", async () => {
    const s = await setup();
    await writeTree(s.sandbox, { "src/main.ts": "export const x = 2;\n" });
    tarDirectory(s.sandbox, s.archive, ["--exclude", "./node_modules"]);
    const run = await runCli(["--json", ...mergeArgs(s)]);
    expect(run.code).toBe(0);
    expect(parseJson(run)).toEqual({
      ok: true,
      command: "merge",
      exitCode: 0,
      target: s.host,
      outcome: "applied",
      attempts: 1,
      counts: { written: 1, deleted: 0 },
      written: ["src/main.ts"],
      deleted: [],
    });
  });

  it("R-LK-6: an unchanged snapshot reports `unchanged` and leaves a concurrent host edit alone", async () => {
    const s = await setup();
    tarDirectory(s.sandbox, s.archive, ["--exclude", "./node_modules"]);
    await writeTree(s.host, { "a.txt": "edited on the host meanwhile\n" });
    const before = await snapshotTree(s.host);
    const run = await runCli(["--json", ...mergeArgs(s)]);
    expect(run.code).toBe(0);
    expect(parseJson(run)).toMatchObject({ outcome: "unchanged", written: [], deleted: [] });
    expect(await snapshotTree(s.host)).toEqual(before);
  });

  it("a conflict is refused (exit 1) with the list of conflicts, and nothing is written", async () => {
    const s = await setup();
    await writeTree(s.sandbox, { "a.txt": "the sandbox's version\n", "new.txt": "would be new\n" });
    tarDirectory(s.sandbox, s.archive, ["--exclude", "./node_modules"]);
    await writeTree(s.host, { "a.txt": "the host's version\n" });
    const before = await snapshotTree(s.host);

    const run = await runCli(mergeArgs(s));
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^conflict: 1 conflict\(s\) with host changes since the baseline; nothing was written/,
    );
    expect(run.stdout).toMatch(/a\.txt\s+both_changed/);
    expect(await snapshotTree(s.host)).toEqual(before);
    expect(await stagingLeft(s.home)).toEqual([]);

    const doc = parseJson(await runCli(["--json", ...mergeArgs(s)]));
    expect(doc).toMatchObject({ ok: false, exitCode: 1, outcome: "conflict", attempts: 1 });
    expect(doc.conflicts).toEqual([
      { path: "a.txt", kind: "both_changed", detail: expect.any(String) },
    ]);
    expect(await snapshotTree(s.host)).toEqual(before);
  });

  it("R-UA-2: a hostile archive is rejected (exit 1), never extracted, and the host is untouched", async () => {
    const s = await setup();
    s.archive = await hostileArchive(s.work);
    const before = await snapshotTree(s.host);
    const run = await runCli(["--json", ...mergeArgs(s)]);
    expect(run.code).toBe(1);
    const doc = parseJson(run);
    expect(doc).toMatchObject({ outcome: "rejected", attempts: 1 });
    expect((doc.violations as { code: string }[]).map((v) => v.code).sort()).toEqual([
      "absolute_symlink",
      "hard_link",
      "parent_traversal",
    ]);
    expect(await snapshotTree(s.host)).toEqual(before);
    expect(await stagingLeft(s.home)).toEqual([]);
    await expect(lstat(path.join(s.work, "evil.txt"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("bad input (baseline not JSON, not a manifest, target missing) is exit 2 and creates nothing", async () => {
    const s = await setup();
    tarDirectory(s.sandbox, s.archive, ["--exclude", "./node_modules"]);
    const before = await snapshotTree(s.host);

    await writeFile(s.baseline, "{ not json");
    let run = await runCli(mergeArgs(s));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^copyback merge: The baseline manifest .* is not valid JSON/);
    expect(run.stderr).not.toContain("    at "); // no stack trace

    await writeFile(
      s.baseline,
      JSON.stringify({
        version: 1,
        entries: [{ path: "../x", type: "file", mode: 420, sha256: "0".repeat(64) }],
      }),
    );
    run = await runCli(["--json", ...mergeArgs(s)]);
    expect(run.code).toBe(2);
    expect(parseJson(run)).toMatchObject({
      ok: false,
      command: "merge",
      error: { code: "invalid_manifest" },
    });

    await writeFile(s.baseline, JSON.stringify(await takeManifest(s.sandbox)));
    run = await runCli([
      ...mergeArgs(s).filter((a) => a !== s.host),
      "--target",
      path.join(s.work, "missing"),
    ]);
    expect(run.code).toBe(2);

    expect(await snapshotTree(s.host)).toEqual(before);
    await expect(lstat(s.home)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("R-RR-1: a lock held by another process with --no-retries fails after one attempt (exit 3), host untouched", async () => {
    const s = await setup();
    await writeTree(s.sandbox, { "a.txt": "changed\n" });
    tarDirectory(s.sandbox, s.archive, ["--exclude", "./node_modules"]);
    await mkdir(s.home, { mode: 0o700 });
    holders.push(await holdLock(s.home, s.host));
    const before = await snapshotTree(s.host);

    const started = Date.now();
    const run = await runCli(["--json", ...mergeArgs(s, "--no-retries", "--lock-timeout", "200")]);
    expect(run.code).toBe(3);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(parseJson(run)).toMatchObject({
      ok: false,
      command: "merge",
      exitCode: 3,
      error: { code: "directory_merge_lock_timeout" },
    });
    expect(run.stderr).not.toContain("retrying");
    expect(run.stderr).toContain("Timed out");
    expect(await snapshotTree(s.host)).toEqual(before);
    expect(await stagingLeft(s.home)).toEqual([]);
  });

  it("R-RR-1: a held lock is retried up to three attempts in total, then exit 3", async () => {
    const s = await setup();
    await writeTree(s.sandbox, { "a.txt": "changed\n" });
    tarDirectory(s.sandbox, s.archive, ["--exclude", "./node_modules"]);
    await mkdir(s.home, { mode: 0o700 });
    holders.push(await holdLock(s.home, s.host));
    const run = await runCli(mergeArgs(s, "--lock-timeout", "100"));
    expect(run.code).toBe(3);
    expect(run.stderr.match(/retrying in \d+ ms/g)).toHaveLength(2);
    expect(run.stderr).toContain("attempt 1 failed before any host write (lock_timeout");
    expect(await stagingLeft(s.home)).toEqual([]);
  });

  it("R-RR-1: when the lock is freed between attempts, the retry applies the change (attempts 2)", async () => {
    const s = await setup();
    await writeTree(s.sandbox, { "a.txt": "changed\n" });
    tarDirectory(s.sandbox, s.archive, ["--exclude", "./node_modules"]);
    await mkdir(s.home, { mode: 0o700 });
    const holder = await holdLock(s.home, s.host);
    holders.push(holder);
    let released: Promise<void> | undefined;
    const run = await runCli(["--json", ...mergeArgs(s, "--lock-timeout", "100")], {
      // The retry note is written before the backoff sleep: free the lock right then.
      onStderr: (text) => {
        if (text.includes("retrying")) released ??= holder.release();
      },
    });
    await released;
    expect(run.code).toBe(0);
    expect(parseJson(run)).toMatchObject({ outcome: "applied", attempts: 2, written: ["a.txt"] });
    expect(await snapshotTree(s.host)).toEqual(await snapshotTree(s.sandbox));
  });

  it("refuses an instance root writable by others (exit 3) before touching anything", async () => {
    const s = await setup();
    tarDirectory(s.sandbox, s.archive, ["--exclude", "./node_modules"]);
    await mkdir(s.home);
    const { chmod } = await import("node:fs/promises");
    await chmod(s.home, 0o777);
    const run = await runCli(["--json", ...mergeArgs(s)]);
    expect(run.code).toBe(3);
    expect(parseJson(run)).toMatchObject({ error: { code: "instance_root_insecure" } });
    expect(await readdir(s.home)).toEqual([]);
  });
});
