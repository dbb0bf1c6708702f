import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  mergeSnapshot,
  probeHost,
  realFsOps,
  cleanStrayTemporaries,
  type FsOps,
  type HostProbe,
} from "../../src/copyback/merge/index";
import { DirectoryMergeLocks, LockTimeoutError, listLocks } from "../../src/copyback/locks/index";
import { FakeLocks, file, link, readTree, removeTempDirs, scenario, dir } from "./helpers";

afterEach(removeTempDirs);

/** Records every call of every fs operation, then delegates to the real one. */
function recordingFsOps(calls: string[]): FsOps {
  const out = {} as FsOps;
  for (const [name, fn] of Object.entries(realFsOps) as [
    keyof FsOps,
    (...args: unknown[]) => Promise<unknown>,
  ][]) {
    (out as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      calls.push(name);
      return fn(...args);
    };
  }
  return out;
}

describe("mergeSnapshot: an unchanged snapshot (R-LK-6)", () => {
  it("R-LK-6: takes the lock, runs both hooks, skips the host scan and leaves a concurrent host edit untouched", async () => {
    const tree = {
      "a.txt": file("a"),
      "src/b.ts": file("b", 0o755),
      bin: dir(0o750),
      here: link("src/b.ts"),
    };
    const s = await scenario(tree, tree, tree);
    const events: string[] = [];
    const probeCalls: string[] = [];
    const cleanCalls: string[] = [];
    const fsCalls: string[] = [];
    const spyProbe: HostProbe = async (request) => {
      probeCalls.push("probe");
      return probeHost(request);
    };
    const lockState = async () =>
      (await listLocks(s.instanceRoot)).locks.map((l) => l.state).join(",");
    // Another writer of the same instance: while the merge runs it must not get the lock.
    const contender = new DirectoryMergeLocks({ instanceRoot: s.instanceRoot, timeoutMs: 150 });
    const outcome = await mergeSnapshot({
      target: s.host,
      baseline: s.baseline,
      snapshotDir: s.snapshot,
      locks: s.locks,
      hooks: {
        authorize: async () => {
          events.push(`authorize lock=${await lockState()}`);
          const attempt = await contender
            .withLock(s.host, async () => "got it")
            .catch((e: unknown) => e);
          events.push(
            `contender ${attempt instanceof LockTimeoutError ? "timed out" : String(attempt)}`,
          );
          // A host edit made while the merge runs (a user saving a file): it must survive.
          await writeFile(path.join(s.host, "a.txt"), "edited on the host during the merge");
        },
        publish: async (outcome) => {
          events.push(`publish ${outcome.kind} lock=${await lockState()}`);
        },
      },
      seams: {
        fsOps: recordingFsOps(fsCalls),
        probeHost: spyProbe,
        cleanTemporaries: async (...args) => {
          cleanCalls.push("clean");
          return cleanStrayTemporaries(...args);
        },
      },
    });
    expect(outcome).toEqual({ kind: "unchanged" });
    expect(events).toEqual([
      "authorize lock=held",
      "contender timed out",
      "publish unchanged lock=held",
    ]);
    expect(await lockState()).toBe("free");
    expect(probeCalls).toEqual([]); // the host scan never ran
    expect(cleanCalls).toEqual([]); // not even the temporaries walk
    expect(fsCalls).toEqual([]); // and nothing was written
    expect(await readFile(path.join(s.host, "a.txt"), "utf8")).toBe(
      "edited on the host during the merge",
    );
  });

  it("R-LK-6: a snapshot that differs only in a file mode is a delta (mode is part of the comparison)", async () => {
    const base = { "run.sh": file("x", 0o644) };
    const s = await scenario(base, { "run.sh": file("x", 0o755) }, base);
    const probeCalls: string[] = [];
    const outcome = await mergeSnapshot({
      target: s.host,
      baseline: s.baseline,
      snapshotDir: s.snapshot,
      locks: s.locks,
      seams: {
        probeHost: async (request) => {
          probeCalls.push(...request.paths);
          return probeHost(request);
        },
      },
    });
    expect(outcome).toEqual({ kind: "applied", written: ["run.sh"], deleted: [] });
    expect(probeCalls).toEqual(["run.sh"]); // the full preflight runs, limited to what changed
    expect((await readTree(s.host))["run.sh"]).toEqual({ type: "file", mode: 0o755, content: "x" });
  });

  it("R-LK-6: a link retargeted in the snapshot is a delta; the hooks still run once each", async () => {
    const base = { t1: file("1"), t2: file("2"), l: link("t1") };
    const s = await scenario(base, { ...base, l: link("t2") }, base);
    const events: string[] = [];
    const outcome = await mergeSnapshot({
      target: s.host,
      baseline: s.baseline,
      snapshotDir: s.snapshot,
      locks: s.locks,
      hooks: {
        authorize: async () => void events.push("authorize"),
        publish: async (o) => void events.push(`publish ${o.kind}`),
      },
    });
    expect(outcome.kind).toBe("applied");
    expect(events).toEqual(["authorize", "publish applied"]);
  });

  it("R-LK-6: a failing authorization stops the merge before anything is read or written", async () => {
    const base = { "a.txt": file("a") };
    const s = await scenario(base, { "a.txt": file("new") }, base);
    const locks = new FakeLocks();
    const error = new Error("not authorized");
    await expect(
      mergeSnapshot({
        target: s.host,
        baseline: s.baseline,
        snapshotDir: s.snapshot,
        locks,
        hooks: { authorize: async () => Promise.reject(error) },
      }),
    ).rejects.toBe(error);
    expect(locks.events).toEqual(["acquire", "release"]);
    expect(await readFile(path.join(s.host, "a.txt"), "utf8")).toBe("a");
  });
});
