// The worker process: connects to the database, dispatches queued runs from its loop, serves
// liveness, stops on signals (the first drains the runs in flight, the second forces the exit).
// A second loop runs the reconciler (recovery sweeps) at start and every RECONCILE_INTERVAL_MS.
import { pino } from "pino";
import { createPrismaClient, probeQuery } from "@copyback/db";
import { createMetricsEndpoint } from "@copyback/core/metrics";
import { createWorkerDispatch } from "./dispatch";
import { createWorkerReconciler } from "./reconcile";
import { createPassLogFilter } from "./reconcile-log";
import { createWorkerRuntime } from "./runtime";
import { harnessConfigOf, parseWorkerEnv } from "./env";
import { resolveControllerPlatform } from "./worker-platform";
import { WorkerLoop } from "./loop";
import { reportHostIsolation } from "./isolation";
import { startHostHeartbeat } from "./host-heartbeat";
import { serveLiveness } from "./liveness";
import { serveMetrics } from "./metrics-server";
import { installStopSignals } from "./signals";
import { startWakeListener } from "./wake-listener";

const env = parseWorkerEnv();
const platform = await resolveControllerPlatform(env);
const log = pino({ level: env.LOG_LEVEL, base: { service: "copyback-worker", pid: process.pid } });

const prisma = createPrismaClient({
  databaseUrl: env.DATABASE_URL,
  poolSize: env.DATABASE_POOL_SIZE ?? env.WORKER_CONCURRENCY + 4,
  applicationName: "copyback-worker",
});

// A settled run frees a slot: the loop then claims again at once instead of after its sleep.
let wakeLoop = (): void => undefined;
const runtime = await createWorkerRuntime({
  prisma,
  databaseUrl: env.DATABASE_URL,
  instanceRoot: env.COPYBACK_HOME,
  ...(env.COPYBACK_HOST_ID !== undefined ? { hostId: env.COPYBACK_HOST_ID } : {}),
  apiUrl: env.COPYBACK_API_URL,
  exportTimeoutMs: env.COPYBACK_EXPORT_TIMEOUT_MS,
  localIsolation: env.COPYBACK_LOCAL_ISOLATION,
  ...(env.COPYBACK_DAYTONA_LIFECYCLE_TIMEOUT_SEC !== undefined ? { daytonaLifecycleTimeoutSec: env.COPYBACK_DAYTONA_LIFECYCLE_TIMEOUT_SEC } : {}),
  ...(env.COPYBACK_MERGE_TRACE_FILE ? { mergeTraceFile: env.COPYBACK_MERGE_TRACE_FILE } : {}),
  ...(platform ? { platform } : {}),
  log,
});
const isolation = await reportHostIsolation(env.COPYBACK_HOME, log);
// Issue 23: this host is served while its workers heartbeat (worker_hosts); runs bound to a host
// without a live worker show "Waiting for the worker on HOST" (queued) or that its worker stopped
// during the run (running).
const heartbeat = await startHostHeartbeat({ db: prisma, hostId: runtime.hostId, log });
const dispatcher = createWorkerDispatch({ runtime, concurrency: env.WORKER_CONCURRENCY, abortGraceMs: env.WORKER_ABORT_GRACE_MS, onSlotFreed: () => wakeLoop() });
// The reconciler judges this process's own runs by what its dispatcher executes (a run it gave up
// on is orphaned even though its controller lives).
const harness = await harnessConfigOf(env);
const reconciler = createWorkerReconciler(runtime, log, { executesHere: (runId) => dispatcher.executes(runId), ...(harness ? { harness } : {}) });

const loop = new WorkerLoop({
  intervalMs: env.WORKER_POLL_INTERVAL_MS,
  // The claim is a database round trip, so a finished pass also proves the database answers.
  pass: (signal) => dispatcher.pass(signal),
  onError: (error) => log.error({ err: error }, "worker pass failed"),
});
wakeLoop = () => loop.wake();
// A queued run wakes the loop at once (one dedicated LISTEN connection, reopened with backoff);
// the poll above stays the fallback while it is down.
const wakeListener =
  env.WORKER_LISTEN === "on"
    ? startWakeListener({
        databaseUrl: env.DATABASE_URL,
        wake: () => loop.wake(),
        onStateChange: (state, error) => {
          if (state === "reconnecting") log.warn({ err: error }, "wake listener lost its connection; polling every WORKER_POLL_INTERVAL_MS until it is back");
        },
      })
    : null;

const passLog = createPassLogFilter();
const reconcileLoop = new WorkerLoop({
  intervalMs: env.RECONCILE_INTERVAL_MS,
  pass: async (signal) => {
    const result = await reconciler.pass(signal);
    const decision = passLog(result.outcomes, result.errors);
    if (decision.log) log.info({ outcomes: decision.outcomes, errors: result.errors }, "reconciler pass");
    return { busy: result.busy };
  },
  onError: (error) => log.error({ err: error }, "reconciler pass failed"),
});

const liveness = await serveLiveness({
  host: env.WORKER_HEALTH_HOST,
  port: env.WORKER_HEALTH_PORT,
  loop: () => loop.status,
  staleAfterMs: Math.max(env.WORKER_POLL_INTERVAL_MS * 5, 30_000),
  // Not ready while the database does not answer (GET /readyz); the loop's failing passes keep it live.
  database: () => probeQuery(() => prisma.$queryRaw`SELECT 1`, 2_000),
});
const metricsServer =
  env.WORKER_METRICS === "on"
    ? await serveMetrics({
        host: env.WORKER_METRICS_HOST,
        port: env.WORKER_METRICS_PORT,
        endpoint: createMetricsEndpoint({ db: prisma }),
        onError: (error) => log.warn({ err: error }, "metrics scrape failed"),
      })
    : null;
log.info(
  { liveness: liveness.url, metrics: metricsServer?.url ?? "off", readiness: liveness.readyUrl, concurrency: env.WORKER_CONCURRENCY, instanceRoot: env.COPYBACK_HOME, hostId: runtime.hostId, workerId: heartbeat.workerId, isolated: isolation.report.isolated, platform: platform?.kind ?? "none", ...(platform?.kind === "worker_cgroup" ? { workerCgroup: platform.path } : {}), harness: harness ? "on" : "off" },
  "worker started",
);
if (isolation.warning) log.warn({ reason: isolation.report.reason }, isolation.warning);

installStopSignals({
  graceful: (signal) => {
    log.info({ signal }, "stopping gracefully: no new runs; runs in flight may finish; send the signal again to force");
    void loop.stop();
    void reconcileLoop.stop();
  },
  forced: (signal) => {
    log.warn({ signal, inFlight: dispatcher.inFlight }, "forced stop");
    process.exit(130);
  },
});

await Promise.all([loop.start(), reconcileLoop.start()]);
// No more claims from here: the row says draining at once (the host's queued runs no longer count
// this worker, not after the bound), and keeps beating while the runs in flight finish, so they
// do not read as stopped during their run. It is deleted once they have.
await heartbeat.drain();
await wakeListener?.stop();
const drained = await dispatcher.drain(env.WORKER_DRAIN_TIMEOUT_MS);
// A finalization is never cut off by closing the database under it: a copyback stopped mid-way
// would leave a receipt that only an operator could release. Each one has its own export
// deadline; a second signal still forces the exit.
if (runtime.finalizations.size > 0) {
  log.info({ finalizations: runtime.finalizations.size }, "waiting for finalizations in flight before closing the database");
  await Promise.allSettled([...runtime.finalizations]);
}
await heartbeat.stop();
await liveness.close();
await metricsServer?.close();
await prisma.$disconnect();
log.info({ passes: loop.status.passes, reconcilePasses: reconcileLoop.status.passes, ...drained }, "worker stopped");
// Exit now rather than when the event loop empties: a run the drain gave up on ("abandoned" above)
// may still hold a database connection or a timer after its finalization (its lease release), and
// would keep a stopped worker alive for ever (seen: the SIGTERM test's worker, a socket and a timer
// left after "worker stopped"). What it left is recovered by the next start's reconciler.
process.exit(0);
