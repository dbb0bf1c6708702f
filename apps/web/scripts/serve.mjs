// `next start` for the console, in one process or in several that share the port.
//
//   node scripts/serve.mjs -H 127.0.0.1 -p 3000      (arguments go to `next start`)
//
// The worker count comes from web-workers.mjs (COPYBACK_WEB_WORKERS, else one per core up to two
// in local mode). With one worker this process simply becomes `next start`. With more, it is a
// node:cluster primary: each worker runs Next.js's own `next start` (the same server as the single
// process, nothing re-implemented); their listen() calls share one socket held by the primary,
// which hands connections round-robin. A worker that dies takes the others down with it and the
// exit code is passed on, so whoever started the console sees the failure (no silent respawn
// loop). SIGTERM / SIGINT are passed to the workers, which shut down as `next start` does.
//
// With the render cache on (local mode by default, render-cache.mjs), each process runs
// cached-next-server.mjs instead: the same Next.js server through its custom-server API, with the
// cache in front of it.
import cluster from "node:cluster";
import { createRequire } from "node:module";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { renderCacheEnabled } from "./render-cache.mjs";
import { webWorkerCount } from "./web-workers.mjs";

const nextBin = createRequire(import.meta.url).resolve("next/dist/bin/next");
const cachedServer = fileURLToPath(new URL("./cached-next-server.mjs", import.meta.url));
const listenArgs = process.argv.slice(2);
const startArgs = ["start", ...listenArgs];

if (cluster.isPrimary) {
  const workers = webWorkerCount(process.env, os.availableParallelism());
  const cached = renderCacheEnabled(process.env);
  if (workers === 1 && cached) {
    const { serveWithRenderCache } = await import("./cached-next-server.mjs");
    await serveWithRenderCache(listenArgs);
  } else if (workers === 1) {
    process.argv = [process.argv[0], nextBin, ...startArgs];
    await import(nextBin);
  } else {
    cluster.setupPrimary(cached ? { exec: cachedServer, args: listenArgs } : { exec: nextBin, args: startArgs });
    let stopping = false;
    let exitCode = 0;
    const stop = (signal) => {
      stopping = true;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
    };
    for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => stop(signal));
    cluster.on("exit", (worker, code, signal) => {
      if (!stopping) {
        console.error(`[copyback web] worker ${worker.process.pid} exited (${signal ?? code}); stopping the others`);
        exitCode = code || 1;
        stop("SIGTERM");
      }
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
    });
    for (let i = 0; i < workers; i++) cluster.fork();
  }
}
