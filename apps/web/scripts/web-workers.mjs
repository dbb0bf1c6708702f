// How many `next start` processes serve the console (scripts/serve.mjs). Pure: the caller passes
// the environment and the number of CPUs.
//
// One Node.js process renders pages on one core. On a 2-core machine with 20 readers at once the
// board then waits for that core, so local mode runs one process per core, up to two:
// they share the port through node:cluster and each keeps its own pool, LISTEN connection and
// live-update hub. Authenticated mode stays on one process unless told otherwise, because the
// password sign-in throttle (src/server/auth/sign-in-limiter.ts) counts attempts in memory:
// N processes would allow N times the attempts.
//
// With the render cache on (local mode's default, render-cache.mjs) the default is one process:
// most answers are then sub-millisecond hits, and every change costs one render of each page
// asked for per process, so a second process doubles those renders and competes with PostgreSQL
// for the two cores. Measured in alternating runs at the same load (README "Console benchmarks"):
// 20 readers p95 59 and 66 ms with one process, 175 and 503 ms with two.
import { renderCacheEnabled } from "./render-cache.mjs";

export const MAX_DEFAULT_WORKERS = 2;
export const MAX_WORKERS = 16;

/**
 * @param {{ COPYBACK_WEB_WORKERS?: string; COPYBACK_DEPLOYMENT_MODE?: string; COPYBACK_WEB_RENDER_CACHE?: string; COPYBACK_CONSOLE_SECRET?: string }} env
 * @param {number} cpus
 * @returns {number}
 */
export function webWorkerCount(env, cpus) {
  const requested = env.COPYBACK_WEB_WORKERS?.trim();
  if (requested) {
    const n = Number(requested);
    if (!Number.isInteger(n) || n < 1 || n > MAX_WORKERS)
      throw new Error(`COPYBACK_WEB_WORKERS must be a whole number from 1 to ${MAX_WORKERS} (got "${requested}")`);
    return n;
  }
  if ((env.COPYBACK_DEPLOYMENT_MODE ?? "local") !== "local") return 1;
  if (renderCacheEnabled(env)) return 1;
  return Math.max(1, Math.min(MAX_DEFAULT_WORKERS, Math.floor(cpus)));
}
