// The worker process: connects to the database, dispatches queued runs from its loop, serves
// liveness, stops on signals (the first drains the runs in flight, the second forces the exit).
// Later issues add passes (reconciler, cleanup sweeps) to the loop's pass.
import { pino } from "pino";
import { createPrismaClient } from "@copyback/db";
import { createWorkerDispatch } from "./dispatch";
import { parseWorkerEnv } from "./env";
import { WorkerLoop } from "./loop";
import { serveLiveness } from "./liveness";
import { installStopSignals } from "./signals";

const env = parseWorkerEnv();
const log = pino({ level: env.LOG_LEVEL, base: { service: "copyback-worker", pid: process.pid } });

const prisma = createPrismaClient({
  databaseUrl: env.DATABASE_URL,
  poolSize: env.DATABASE_POOL_SIZE ?? env.WORKER_CONCURRENCY + 4,
  applicationName: "copyback-worker",
});

// A settled run frees a slot: the loop then claims again at once instead of after its sleep.
let wakeLoop = (): void => undefined;
const dispatcher = await createWorkerDispatch({
  prisma,
  databaseUrl: env.DATABASE_URL,
  instanceRoot: env.COPYBACK_HOME,
  concurrency: env.WORKER_CONCURRENCY,
  apiUrl: env.COPYBACK_API_URL,
  exportTimeoutMs: env.COPYBACK_EXPORT_TIMEOUT_MS,
  log,
  onSlotFreed: () => wakeLoop(),
});

const loop = new WorkerLoop({
  intervalMs: env.WORKER_POLL_INTERVAL_MS,
  // The claim is a database round trip, so a finished pass also proves the database answers.
  pass: (signal) => dispatcher.pass(signal),
  onError: (error) => log.error({ err: error }, "worker pass failed"),
});
wakeLoop = () => loop.wake();

const liveness = await serveLiveness({
  host: env.WORKER_HEALTH_HOST,
  port: env.WORKER_HEALTH_PORT,
  loop: () => loop.status,
  staleAfterMs: Math.max(env.WORKER_POLL_INTERVAL_MS * 5, 30_000),
});
log.info(
  { liveness: liveness.url, concurrency: env.WORKER_CONCURRENCY, instanceRoot: env.COPYBACK_HOME },
  "worker started",
);

installStopSignals({
  graceful: (signal) => {
    log.info({ signal }, "stopping gracefully: no new runs; runs in flight may finish; send the signal again to force");
    void loop.stop();
  },
  forced: (signal) => {
    log.warn({ signal, inFlight: dispatcher.inFlight }, "forced stop");
    process.exit(130);
  },
});

await loop.start();
const drained = await dispatcher.drain(env.WORKER_DRAIN_TIMEOUT_MS);
await liveness.close();
await prisma.$disconnect();
log.info({ passes: loop.status.passes, ...drained }, "worker stopped");
