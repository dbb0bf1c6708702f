// How a Stop reaches the worker executing the run (R-RC-7): the Stop service records a durable
// stop request on the run row (runs/stop-run.ts); the executor polls its own run's row while it
// drives the run (one primary-key read per interval) and aborts the agent's exec through an
// AbortSignal, which kills the agent's whole process group (the provider's exec contract). The
// same signal also follows the worker's own abort (a drain), so the executor passes one signal on.
// A poll that fails (a database blip) is skipped; the next one tries again.
import type { PrismaClient } from "@copyback/db/client";
import { readStopRequest, type StopRequestRecord } from "../records/run-stop-records";

export const STOP_POLL_MS = 1_000;

export class StopRequested extends Error {
  constructor(readonly request: StopRequestRecord) {
    super("Stop was requested for this run.");
    this.name = "StopRequested";
  }
}

export interface StopWatch {
  /** Aborted by a stop request (reason: StopRequested) or by the worker's own signal. */
  readonly signal: AbortSignal;
  /** The stop request seen so far. */
  requested(): StopRequestRecord | null;
  /** Reads the run row once more (after the agent exited: a request that landed at the very end). */
  check(): Promise<StopRequestRecord | null>;
  close(): void;
}

export function watchForStop(db: PrismaClient, runId: string, parent: AbortSignal, intervalMs: number = STOP_POLL_MS): StopWatch {
  const controller = new AbortController();
  let request: StopRequestRecord | null = null;
  let polling = false;
  const onParentAbort = () => controller.abort(parent.reason);
  if (parent.aborted) controller.abort(parent.reason);
  else parent.addEventListener("abort", onParentAbort, { once: true });

  const check = async (): Promise<StopRequestRecord | null> => {
    if (request) return request;
    const row = await db.heartbeatRun.findUnique({ where: { id: runId }, select: { runnerProfileJson: true } });
    const found = row ? readStopRequest(row.runnerProfileJson) : null;
    if (found && !request) {
      request = found;
      controller.abort(new StopRequested(found));
    }
    return request;
  };
  const timer = setInterval(() => {
    if (polling || request) return;
    polling = true;
    check()
      .catch(() => undefined)
      .finally(() => {
        polling = false;
      });
  }, intervalMs);
  timer.unref();
  // A request recorded before the executor even started (between claim and dispatch).
  void check().catch(() => undefined);

  return {
    signal: controller.signal,
    requested: () => request,
    check,
    close() {
      clearInterval(timer);
      parent.removeEventListener("abort", onParentAbort);
    },
  };
}
