// `copyback locks list` and `copyback doctor` against real instance roots.
import { chmod, mkdir, symlink } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DirectoryMergeLocks, hashTarget } from "../../src/copyback/locks/index";
import {
  holdLock,
  NO_USER_HOME,
  parseJson,
  removeTempDirs,
  runCli,
  tempDir,
  type LockHolder,
} from "./helpers";

const holders: LockHolder[] = [];
afterEach(async () => {
  for (const h of holders.splice(0)) await h.release();
  await removeTempDirs();
});

/** A private instance root in which `target` has been locked once (so its lock file exists). */
async function instance(): Promise<{
  home: string;
  target: string;
  lockRoot: string;
  hash: string;
}> {
  const work = await tempDir("locks");
  const home = path.join(work, "home");
  const target = path.join(work, "target");
  await mkdir(home, { mode: 0o700 });
  await mkdir(target);
  await new DirectoryMergeLocks({ instanceRoot: home }).withLock(target, async () => undefined);
  return {
    home,
    target,
    lockRoot: path.join(home, "locks", "directory-merge"),
    hash: hashTarget(target),
  };
}

describe("copyback locks list", { timeout: 30_000 }, () => {
  it("an instance root without a lock root: exit 0, nothing listed", async () => {
    const home = await tempDir("locks");
    const run = await runCli(["--json", "locks", "list", "--home", home]);
    expect(run.code).toBe(0);
    expect(parseJson(run)).toMatchObject({
      ok: true,
      command: "locks list",
      exists: false,
      locks: [],
      legacyDirectories: [],
    });
    expect((await runCli(["locks", "list", "--home", home])).stdout).toMatch(/^no lock root at /);
  });

  it("R-LK-3: shows a held lock as held (probed), with the holder's sidecar as a claim", async () => {
    const { home, target, hash } = await instance();
    const free = parseJson(await runCli(["--json", "locks", "list", "--home", home]));
    expect(free).toMatchObject({
      summary: { held: 0, free: 1 },
      locks: [{ hash, state: "free", owner: { status: "absent" } }],
    });

    const holder = await holdLock(home, target);
    holders.push(holder);
    const run = await runCli(["--json", "locks", "list", "--home", home]);
    expect(run.code).toBe(0);
    expect(parseJson(run)).toMatchObject({
      summary: { held: 1, free: 0, legacyDirectories: 0 },
      locks: [{ hash, state: "held", owner: { status: "valid", pid: holder.pid, target } }],
    });
    const text = await runCli(["locks", "list", "--home", home]);
    expect(text.stdout).toContain(`${hash.slice(0, 12)}  held`);
    expect(text.stdout).toContain(`pid ${holder.pid}`);
  });

  it("R-LK-5: lists a legacy lock directory as blocking, with the upgrade steps", async () => {
    const { home, lockRoot, hash } = await instance();
    await mkdir(path.join(lockRoot, `${hash}.lock`));
    const run = await runCli(["locks", "list", "--home", home]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("BLOCKED");
    expect(run.stdout).toContain(`locks/directory-merge/${hash}.lock/`);
    expect(run.stdout).toContain("never judged dead by PID or age");
    expect(parseJson(await runCli(["--json", "locks", "list", "--home", home]))).toMatchObject({
      summary: { legacyDirectories: 1 },
      legacyDirectories: [{ hash }],
    });
  });

  it("a lock root that is a symlink is refused (exit 3, code lock_root_symlink)", async () => {
    const work = await tempDir("locks");
    const home = path.join(work, "home");
    await mkdir(path.join(home, "locks"), { recursive: true, mode: 0o700 });
    await mkdir(path.join(work, "elsewhere"), { mode: 0o700 });
    await symlink(path.join(work, "elsewhere"), path.join(home, "locks", "directory-merge"));
    const run = await runCli(["--json", "locks", "list", "--home", home]);
    expect(run.code).toBe(3);
    expect(parseJson(run)).toMatchObject({ ok: false, error: { code: "lock_root_symlink" } });
    expect(run.stderr).toMatch(
      /^copyback locks list: The lock directory directory-merge\/ is a symlink/,
    );
  });
});

describe("copyback doctor", { timeout: 30_000 }, () => {
  it("a healthy instance root: every check ok, exit 0", async () => {
    const { home } = await instance();
    const run = await runCli(["--json", "doctor", "--home", home]);
    expect(run.code).toBe(0);
    const doc = parseJson(run);
    expect(doc).toMatchObject({ ok: true, command: "doctor", healthy: true, instanceRoot: home });
    const checks = doc.checks as { id: string; status: string; summary: string }[];
    expect(checks.map((c) => [c.id, c.status])).toEqual([
      ["instance_root", "ok"],
      ["filesystem", "ok"],
      ["lock_root", "ok"],
      ["staging", "ok"],
      ["host_id", "ok"],
    ]);
    expect(checks[1]?.summary).toMatch(/file locking can be trusted/);
    expect(checks[2]?.summary).toBe("0 held, 1 free, 0 refused, 0 legacy directories");
  });

  it("a missing or non-private instance root fails (exit 3) with what to do", async () => {
    const work = await tempDir("doctor");
    const missing = await runCli(["doctor", "--home", path.join(work, "nope")]);
    expect(missing.code).toBe(3);
    expect(missing.stdout).toMatch(/^fail\s+instance_root\s+.*does not exist/);

    await chmod(work, 0o755);
    const open = await runCli(["doctor", "--home", work]);
    expect(open.code).toBe(3);
    expect(open.stdout).toMatch(
      /fail\s+instance_root\s+.*is not private \(mode 0755\): run chmod 700/,
    );
  });

  it("accepts exactly the traverse bit the embedded PostgreSQL's launcher sets, on a root whose cluster lives in place, and says why", async () => {
    const work = await tempDir("doctor-traverse");
    await mkdir(path.join(work, "postgres", "data"), { recursive: true });
    await chmod(work, 0o701);
    const traverse = await runCli(["doctor", "--home", work]);
    expect(traverse.stdout).toMatch(
      /ok\s+instance_root\s+.*private but for the traverse bit \(mode 0701\).*do not chmod 700/,
    );

    // Any other bit, or no cluster in place to reach, is what it always was: not private.
    await chmod(work, 0o705);
    expect((await runCli(["doctor", "--home", work])).stdout).toMatch(
      /fail\s+instance_root\s+.*is not private \(mode 0705\)/,
    );
    const bare = await tempDir("doctor-traverse-bare");
    await chmod(bare, 0o701);
    expect((await runCli(["doctor", "--home", bare])).stdout).toMatch(
      /fail\s+instance_root\s+.*is not private \(mode 0701\)/,
    );
  });

  it("R-LK-5: a legacy lock directory fails the lock-root check (exit 3)", async () => {
    const { home, lockRoot, hash } = await instance();
    await mkdir(path.join(lockRoot, `${hash}.lock`));
    const run = await runCli(["--json", "doctor", "--home", home]);
    expect(run.code).toBe(3);
    const checks = parseJson(run).checks as { id: string; status: string; summary: string }[];
    expect(checks.find((c) => c.id === "lock_root")).toMatchObject({
      status: "fail",
      summary: expect.stringContaining("legacy lock directories block admission"),
    });
  });

  it("reports a held lock and leftover staging directories without failing (exit 0)", async () => {
    const { home, target } = await instance();
    holders.push(await holdLock(home, target));
    await mkdir(path.join(home, "staging", "merge-123-abc"), { recursive: true, mode: 0o700 });
    const run = await runCli(["doctor", "--home", home]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/ok\s+lock_root\s+1 held, 0 free/);
    expect(run.stdout).toMatch(/warn\s+staging\s+1 leftover staging directory/);
  });

  it("the instance root is --home, else COPYBACK_HOME, else ~/.copyback", async () => {
    const { home } = await instance();
    expect(parseJson(await runCli(["--json", "doctor"], { copybackHome: home }))).toMatchObject({
      instanceRoot: home,
      healthy: true,
    });
    const other = await tempDir("doctor");
    expect(
      parseJson(await runCli(["--json", "doctor", "--home", other], { copybackHome: home })),
    ).toMatchObject({ instanceRoot: other });
    expect(parseJson(await runCli(["--json", "doctor"]))).toMatchObject({
      instanceRoot: path.join(NO_USER_HOME, ".copyback"),
    });
  });
});
