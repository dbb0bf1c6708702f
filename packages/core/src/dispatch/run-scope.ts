// What every step of one claimed run's execution shares: the executor's dependencies, the claimed
// run, the dispatch log, and the run-event writer (each step writes a run event; a failing write
// is logged and never stops the run's settlement).
import type { Prisma, PrismaClient } from "@copyback/db";
import type { DirectoryMergeLocks } from "../copyback/locks/index";
import type { FinalizeRunDeps } from "../finalization/finalize-run";
import type { ProcessIdentity } from "../process/process-identity";
import type { ProviderRegistry } from "../providers/registry";
import { recordRunEvent } from "../records/run-log";
import type { OutputLimits } from "./agent-output";
import type { ClaimedRunRef } from "./claimed-run";
import type { DispatchLog } from "./dispatch-log";

export interface ExecuteRunDeps {
  db: PrismaClient;
  registry: ProviderRegistry;
  instanceRoot: string;
  locks: DirectoryMergeLocks;
  /** The application database URL: finalization takes its advisory lock on a dedicated connection (R-OWN-6). */
  databaseUrl: string;
  /** This worker process, as recorded on the runs it claims (R-OWN-12). */
  controller: ProcessIdentity;
  /** R-RW-1: the platform deployment this worker runs in, recorded in its owner receipts; absent off any platform. */
  platform?: FinalizeRunDeps["platform"];
  /** The console's base URL, given to the agent as COPYBACK_API_URL (the finish API lives there). */
  apiUrl?: string;
  log?: DispatchLog;
  outputLimits?: OutputLimits;
  /** How long a busy lease is retried in process before the run goes back to the queue. */
  leaseWaitMs?: number;
  /** Backoff of finalization's in-process copyback retries (tests pass a zero backoff). */
  retry?: FinalizeRunDeps["retry"];
  /** How long one copyback try may spend exporting before it is aborted and retried (default 10 minutes). */
  exportTimeoutMs?: FinalizeRunDeps["exportTimeoutMs"];
  /** Finalizations in flight in this process; the worker awaits them before closing the database. */
  finalizations?: Set<Promise<unknown>>;
  /** How long a preparation's recovery claim lives without renewal (R-FO-4; default 15 minutes). */
  preparationClaimMs?: number;
  /** How often the executor reads its run row for a Stop request (R-RC-7; default 1 s). */
  stopPollMs?: number;
  /** How long a Stop's retention tries the task's row lock before leaving it to the sweep (default 2 s). */
  taskLockWaitMs?: number;
  /** How long a database failure before the agent's start is waited out before the run is left to the reconciler (default 5 minutes). */
  databaseOutageMs?: number;
  /** R-PV-1: each agent-pack verification read's transport timeout (default 30 s; tests shorten it). */
  packReadTimeoutMs?: number;
}

export type RunEventLevel = "debug" | "info" | "warn" | "error";

export interface RunScope {
  readonly deps: ExecuteRunDeps;
  readonly claimed: ClaimedRunRef;
  readonly log: DispatchLog;
  /** Records one run event; never throws. */
  event(level: RunEventLevel, code: string, message: string, payload?: Prisma.InputJsonObject, createdAt?: Date): Promise<void>;
}

export function runScope(deps: ExecuteRunDeps, claimed: ClaimedRunRef, log: DispatchLog): RunScope {
  return {
    deps,
    claimed,
    log,
    async event(level, code, message, payload, createdAt) {
      try {
        await recordRunEvent(deps.db, { companyId: claimed.companyId, runId: claimed.runId, level, code, message, payload, createdAt });
      } catch (error) {
        log.warn({ runId: claimed.runId, code, err: error }, "could not record a run event");
      }
    },
  };
}
