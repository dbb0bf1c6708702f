// The worker process: connects to the database, runs the loop, serves liveness, stops on signals.
// Later issues add passes (dispatch, finalization, reconciler, cleanup sweeps) to `runPass`.
import { pino } from "pino";
import { createPrismaClient } from "@copyback/db";
import { parseWorkerEnv } from "./env";
import { WorkerLoop } from "./loop";
import { serveLiveness } from "./liveness";
import { installStopSignals } from "./signals";

const env = parseWorkerEnv();
const log = pino({ level: env.LOG_LEVEL, base: { service: "copyback-worker", pid: process.pid } });

const prisma = createPrismaClient({ databaseUrl: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE, applicationName: "copyback-worker" });

const loop = new WorkerLoop({
  intervalMs: env.WORKER_POLL_INTERVAL_MS,
  pass: async () => {
    // The empty pass proves the database answers; it does no work yet.
    await prisma.$queryRaw`SELECT 1`;
    return { busy: false };
  },
  onError: (error) => log.error({ err: error }, "worker pass failed"),
});

const liveness = await serveLiveness({
  host: env.WORKER_HEALTH_HOST,
  port: env.WORKER_HEALTH_PORT,
  loop: () => loop.status,
  staleAfterMs: Math.max(env.WORKER_POLL_INTERVAL_MS * 5, 30_000),
});
log.info({ liveness: liveness.url }, "worker started");

installStopSignals({
  graceful: (signal) => {
    log.info({ signal }, "stopping gracefully; send the signal again to force");
    void loop.stop();
  },
  forced: (signal) => {
    log.warn({ signal }, "forced stop");
    process.exit(130);
  },
});

await loop.start();
await liveness.close();
await prisma.$disconnect();
log.info({ passes: loop.status.passes }, "worker stopped");
