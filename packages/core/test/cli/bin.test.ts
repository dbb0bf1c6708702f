// The real bin, as operators and `pnpm copyback` run it: a separate Node process, real exit
// statuses, the environment read through env.ts.
import { cp, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { takeManifest } from "../../src/copyback/manifest/index";
import {
  hostileArchive,
  removeTempDirs,
  snapshotTree,
  spawnCli,
  tarDirectory,
  tempDir,
  writeTree,
} from "./helpers";

afterEach(removeTempDirs);

describe("bin/copyback.mjs", { timeout: 60_000 }, () => {
  it("--help exits 0 with the exit-status table; an unknown command exits 2", async () => {
    const help = await spawnCli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Exit status:");
    const bad = await spawnCli(["frobnicate"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown command 'frobnicate'");
  });

  it("archive check: exit 0 for a safe archive, 1 with one JSON document for a hostile one", async () => {
    const work = await tempDir("bin");
    await writeTree(path.join(work, "ws"), { "a.txt": "a" });
    tarDirectory(path.join(work, "ws"), path.join(work, "ok.tar"));
    expect((await spawnCli(["archive", "check", path.join(work, "ok.tar")])).code).toBe(0);

    const hostile = await spawnCli(["archive", "check", "--json", await hostileArchive(work)]);
    expect(hostile.code).toBe(1);
    expect(JSON.parse(hostile.stdout)).toMatchObject({ ok: false, result: "rejected" });
  });

  it("merge: applies a change, then refuses a conflicting one with nothing written (COPYBACK_HOME as the instance root)", async () => {
    const work = await tempDir("bin");
    const sandbox = path.join(work, "sandbox");
    const host = path.join(work, "host");
    const home = path.join(work, "home");
    await writeTree(sandbox, { "a.txt": "one\n", "b.txt": "bee\n" });
    await cp(sandbox, host, { recursive: true });
    const baseline = path.join(work, "baseline.json");
    await writeFile(baseline, JSON.stringify(await takeManifest(sandbox)));
    const archive = path.join(work, "snapshot.tar");
    const env = { COPYBACK_HOME: home };

    await writeTree(sandbox, { "a.txt": "two\n" });
    tarDirectory(sandbox, archive);
    const applied = await spawnCli(
      ["merge", "--baseline", baseline, "--archive", archive, "--target", host],
      env,
    );
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/^applied: 1 written, 0 deleted/);
    expect(await snapshotTree(host)).toEqual(await snapshotTree(sandbox));

    // Same baseline, the sandbox changes b.txt; the host changed b.txt too meanwhile.
    await writeTree(sandbox, { "b.txt": "sandbox bee\n" });
    tarDirectory(sandbox, archive);
    await writeTree(host, { "b.txt": "host bee\n" });
    const before = await snapshotTree(host);
    const conflict = await spawnCli(
      ["--json", "merge", "--baseline", baseline, "--archive", archive, "--target", host],
      env,
    );
    expect(conflict.code).toBe(1);
    expect(JSON.parse(conflict.stdout)).toMatchObject({
      outcome: "conflict",
      conflicts: [{ path: "b.txt", kind: "both_changed" }],
    });
    expect(await snapshotTree(host)).toEqual(before);

    const doctor = await spawnCli(["--json", "doctor"], env);
    expect(JSON.parse(doctor.stdout)).toMatchObject({ instanceRoot: home, healthy: true });
  });

  it("an expected failure prints one line to stderr, no stack trace", async () => {
    const work = await tempDir("bin");
    await mkdir(path.join(work, "t"));
    const run = await spawnCli([
      "merge",
      "--baseline",
      path.join(work, "none.json"),
      "--archive",
      "x.tar",
      "--target",
      path.join(work, "t"),
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
