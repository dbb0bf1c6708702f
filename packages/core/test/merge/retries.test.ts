import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UnsafeArchiveError } from "../../src/copyback/archive/index";
import { DirectoryMergeLocks } from "../../src/copyback/locks/index";
import {
  CopybackWriteError,
  classifyCopybackFailure,
  mergeSnapshot,
  runWithCopybackRetries,
} from "../../src/copyback/merge/index";
import { file, removeTempDirs, scenario } from "./helpers";

const coded = (code: string) => Object.assign(new Error(code), { code });

function recorder() {
  const sleeps: number[] = [];
  return { sleeps, sleep: async (ms: number) => void sleeps.push(ms) };
}

describe("runWithCopybackRetries (R-RR-1)", () => {
  it("R-RR-1: a retryable failure is tried three times in total with a short backoff", async () => {
    const { sleeps, sleep } = recorder();
    const attempts: number[] = [];
    const error = coded("ECONNRESET");
    await expect(
      runWithCopybackRetries(
        async (attempt) => {
          attempts.push(attempt);
          throw error;
        },
        { sleep },
      ),
    ).rejects.toBe(error);
    expect(attempts).toEqual([1, 2, 3]);
    expect(sleeps).toEqual([250, 1000]);
  });

  it("R-RR-1: succeeds on a later attempt and returns its value", async () => {
    const { sleeps, sleep } = recorder();
    const seen: string[] = [];
    const value = await runWithCopybackRetries(
      async (attempt) => {
        if (attempt < 3)
          throw coded(attempt === 1 ? "directory_merge_lock_timeout" : "provider_unreachable");
        return "merged";
      },
      { sleep, backoffMs: 10, onRetry: ({ failure }) => void seen.push(failure.reason) },
    );
    expect(value).toBe("merged");
    expect(sleeps).toEqual([10, 40]);
    expect(seen).toEqual(["lock_timeout", "provider_error"]);
  });

  for (const [name, error] of [
    ["an unsafe archive", coded("unsafe_archive")],
    ["a permission failure", coded("EACCES")],
    ["a failure after host writes", new CopybackWriteError(coded("ECONNRESET"), "apply")],
    ["an unclassified failure", new Error("odd")],
  ] as const) {
    it(`R-RR-1: ${name} is not retried`, async () => {
      const { sleeps, sleep } = recorder();
      let calls = 0;
      await expect(
        runWithCopybackRetries(
          async () => {
            calls++;
            throw error;
          },
          { sleep },
        ),
      ).rejects.toBe(error);
      expect(calls).toBe(1);
      expect(sleeps).toEqual([]);
    });
  }

  it("R-RR-1: retries:false (throwaway-directory restores) makes exactly one attempt", async () => {
    const { sleeps, sleep } = recorder();
    let calls = 0;
    await expect(
      runWithCopybackRetries(
        async () => {
          calls++;
          throw coded("ECONNRESET");
        },
        { retries: false, sleep },
      ),
    ).rejects.toMatchObject({ code: "ECONNRESET" });
    expect(calls).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it("R-RR-1: the real backoff waits on a timer (short: 250 ms then 1 s by default)", async () => {
    let calls = 0;
    const started = performance.now();
    await runWithCopybackRetries(
      async () => {
        if (++calls < 2) throw coded("EPIPE");
        return calls;
      },
      { backoffMs: 20 },
    );
    expect(calls).toBe(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
  });

  it("refuses more than three attempts and bad backoff values, calling nothing", async () => {
    let calls = 0;
    const fn = async () => void calls++;
    await expect(runWithCopybackRetries(fn, { maxAttempts: 4 })).rejects.toBeInstanceOf(RangeError);
    await expect(runWithCopybackRetries(fn, { maxAttempts: 0 })).rejects.toBeInstanceOf(RangeError);
    await expect(runWithCopybackRetries(fn, { backoffMs: -1 })).rejects.toBeInstanceOf(RangeError);
    expect(calls).toBe(0);
  });
});

describe("copyback retries with the real lock and archive errors (R-RR-1)", () => {
  afterEach(removeTempDirs);

  it("R-RR-1: a merge lock held by another restore is retried, and the retry merges", async () => {
    const base = { "a.txt": file("a") };
    const s = await scenario(base, { "a.txt": file("from the sandbox") }, base);
    const impatient = new DirectoryMergeLocks({ instanceRoot: s.instanceRoot, timeoutMs: 100 });
    const holder = await s.locks.acquire(s.host); // another restore holds the target
    const failures: string[] = [];
    const outcome = await runWithCopybackRetries(
      async (attempt) => {
        if (attempt === 2) await holder.release();
        return mergeSnapshot({
          target: s.host,
          baseline: s.baseline,
          snapshotDir: s.snapshot,
          locks: impatient,
        });
      },
      {
        backoffMs: 1,
        onRetry: ({ error, failure }) =>
          void failures.push(`${(error as Error).name}:${failure.reason}`),
      },
    );
    expect(failures).toEqual(["LockTimeoutError:lock_timeout"]);
    expect(outcome).toEqual({ kind: "applied", written: ["a.txt"], deleted: [] });
    expect(await readFile(path.join(s.host, "a.txt"), "utf8")).toBe("from the sandbox");
  });

  it("R-RR-1: the real UnsafeArchiveError is final", () => {
    expect(classifyCopybackFailure(new UnsafeArchiveError([]))).toEqual({
      retryable: false,
      reason: "unsafe_archive",
    });
  });
});
