// An opt-in observation seam for the torture suite (torture/): with
// COPYBACK_MERGE_TRACE_FILE set, every write into a host workspace under its directory-merge lock
// (the sandbox preparation and the finalization merge, whose authorize and publish hooks run
// inside it) appends one JSON line when it enters and one when it leaves the locked section:
// {ev, pid, target, runId, via, t}, where t is CLOCK_MONOTONIC in nanoseconds (the same clock
// as process.hrtime in every process on the host) and runId the run being dispatched or
// reconciled. The line is written synchronously after the lock is taken and before it is
// released, so two overlapping intervals on one target mean two writers at once.
// Unset (the default) nothing is wrapped: the worker uses DirectoryMergeLocks as is.
// The same file also takes `note` lines (two-host torture, issue 23): each run this process
// claimed (`worker.claim`) and each unit a host-bound sweep handled (`sweep.handle`), written by
// the process that did it, so the suite can tell which host touched what without trusting the
// database's own record of it.
import { AsyncLocalStorage } from "node:async_hooks";
import { appendFileSync } from "node:fs";
import { DirectoryMergeLocks, type DirectoryMergeLease } from "@copyback/core";

interface TraceContext {
  runId: string;
  via: "dispatch" | "reconcile";
}

export interface MergeTrace {
  locks: DirectoryMergeLocks;
  /** Runs fn with runId as the run its lock sections belong to. */
  withRun<T>(runId: string, via: TraceContext["via"], fn: () => Promise<T>): Promise<T>;
  /** One observation line {ev, t, pid, ...fields}, synchronously. */
  note(ev: "worker.claim" | "sweep.handle", fields: Record<string, unknown>): void;
}

export function createMergeTrace(file: string, instanceRoot: string): MergeTrace {
  const context = new AsyncLocalStorage<TraceContext>();
  const write = (ev: "merge.enter" | "merge.exit", target: string, extra: object = {}) => {
    const ctx = context.getStore();
    const line = { ev, t: process.hrtime.bigint().toString(), pid: process.pid, target, runId: ctx?.runId ?? null, via: ctx?.via ?? null, ...extra };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
  class TracedLocks extends DirectoryMergeLocks {
    override async withLock<T>(target: string, fn: (lease: DirectoryMergeLease) => Promise<T>, opts?: Parameters<DirectoryMergeLocks["withLock"]>[2]): Promise<T> {
      return super.withLock(
        target,
        async (lease) => {
          write("merge.enter", lease.target);
          let ok = false;
          try {
            const value = await fn(lease);
            ok = true;
            return value;
          } finally {
            write("merge.exit", lease.target, { ok });
          }
        },
        opts,
      );
    }
  }
  return {
    locks: new TracedLocks({ instanceRoot }),
    withRun: (runId, via, fn) => context.run({ runId, via }, fn),
    note: (ev, fields) => appendFileSync(file, `${JSON.stringify({ ev, t: process.hrtime.bigint().toString(), pid: process.pid, ...fields })}\n`),
  };
}
