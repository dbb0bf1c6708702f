// `npm start` ends here: database (embedded unless DATABASE_URL), migrations, demo data, then the
// console and the worker as child processes. Ctrl-C stops everything, the database last. A worker
// that dies on its own is started again (launch/restart-policy.ts); the console's exit stops all.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { resolveHostId } from "@copyback/core/deployment";
import { createPrismaClient, seedDemo } from "@copyback/db";
import { parseLaunchEnv } from "./launch/env";
import { ensureAuthSecret, ensureDemoSignIns } from "./launch/auth";
import { startChild, stopChild, waitForHttp, type ManagedChild } from "./launch/children";
import { localConsoleAccess } from "./launch/console-secret";
import { prepareInstance } from "./launch/instance";
import { decideWorkerRestart } from "./launch/restart-policy";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// The worker drains its runs for up to 30 s (WORKER_DRAIN_TIMEOUT_MS), gives cancelled ones 10 s
// to settle, and then finishes any finalization in flight before it closes the database (a
// copyback cut off mid-way would leave a receipt that only an operator could release); one
// copyback try's export is bounded by COPYBACK_EXPORT_TIMEOUT_MS (10 min). A second Ctrl-C forces.
const WORKER_STOP_GRACE_MS = 11 * 60_000;
const FORCE_AFTER_MS = 1_500;
const say = (message: string) => process.stdout.write(`[copyback] ${message}\n`);

async function main(): Promise<void> {
  const env = parseLaunchEnv(process.env);
  const startedAt = Date.now();
  say(env.DATABASE_URL ? "using the PostgreSQL server from DATABASE_URL" : `starting the embedded PostgreSQL under ${env.COPYBACK_HOME}`);
  // The database (the embedded one supervised) and the isolation of agents, said once.
  const database = await prepareInstance(env, say);

  const children: ManagedChild[] = [];
  let stopping = false;
  let stoppingSince = 0;
  const shutdown = async (code: number) => {
    if (stopping) {
      // A second Ctrl-C, pressed on purpose: stop now (work cut off here is recovered at the next
      // start). A copy of the first signal (a terminal's SIGINT reaches the whole process group, a
      // wrapper forwards its own) arrives within moments and is not a second press.
      if (Date.now() - stoppingSince < FORCE_AFTER_MS) return;
      say("forcing the stop");
      for (const child of children) child.process.kill("SIGKILL");
      return;
    }
    stopping = true;
    stoppingSince = Date.now();
    say("stopping… (runs in flight may finish; press Ctrl-C again to force)");
    await Promise.all(children.map((child) => stopChild(child, child.name === "worker" ? WORKER_STOP_GRACE_MS : undefined)));
    await database.stop();
    say("stopped");
    process.exit(code);
  };
  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));
  // A closed terminal or a lost ssh session hangs up: stop everything as on Ctrl-C. Unhandled, the
  // embedded database's own hook stopped PostgreSQL and the launcher died at once, leaving the web
  // server and the worker (sessions of their own, so no hangup reaches them) running without a
  // database (seen 2026-12-07). Output to a terminal that is gone fails with EIO: ignored, so the
  // stop itself is never cut short by a line it could not print.
  process.on("SIGHUP", () => {
    for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
    void shutdown(0);
  });

  try {
    if (env.COPYBACK_SEED === "demo") {
      const prisma = createPrismaClient({ databaseUrl: database.url, poolSize: 2, applicationName: "copyback-seed" });
      try {
        // The demo workspace is created under this instance root, so it is bound to this host (issue
        // 23): the same resolver and inputs as the worker's (apps/worker/src/runtime.ts), which
        // generates the id into COPYBACK_HOME/host-id here if this is the instance's first start.
        const { hostId } = await resolveHostId({ instanceRoot: env.COPYBACK_HOME, ...(env.COPYBACK_HOST_ID !== undefined ? { configured: env.COPYBACK_HOST_ID } : {}) });
        const seeded = await seedDemo(prisma, { instanceRoot: env.COPYBACK_HOME, hostId });
        say(seeded.created ? "created the demo company" : "demo data already present");
        if (env.COPYBACK_DEPLOYMENT_MODE === "authenticated") {
          // README "Signing in": every demo user signs in with the demo password.
          const demo = await ensureDemoSignIns(prisma);
          const fresh = demo.emails.length > 0 ? ` (just set for ${demo.emails.length} users)` : "";
          say(`demo sign-in: ada@acme.test and the other demo users, password "${demo.password}"${fresh}; use COPYBACK_SEED=none for a real deployment`);
        }
      } finally {
        await prisma.$disconnect();
      }
    }

    // Authenticated mode: the web app signs sessions with this secret (only the web app gets it).
    const authEnv: Record<string, string> = {};
    if (env.COPYBACK_DEPLOYMENT_MODE === "authenticated") {
      const { secret, source } = await ensureAuthSecret(env);
      authEnv.COPYBACK_AUTH_SECRET = secret;
      say(`sign-in required (authenticated mode); session secret from ${source}`);
    }

    const host = env.COPYBACK_HOST.includes(":") ? `[${env.COPYBACK_HOST}]` : env.COPYBACK_HOST;
    const url = `http://${host}:${env.COPYBACK_PORT}`;
    // Local mode trusts the person at the console, not every local process (launch/console-secret.ts).
    const localConsole = env.COPYBACK_DEPLOYMENT_MODE === "local" ? await localConsoleAccess(env.COPYBACK_HOME, url) : null;
    const childEnv = {
      ...process.env,
      // Agents reach the finish API here (the worker passes it on as COPYBACK_API_URL).
      COPYBACK_API_URL: url,
      DATABASE_URL: database.url,
      COPYBACK_HOME: env.COPYBACK_HOME,
      COPYBACK_DEPLOYMENT_MODE: env.COPYBACK_DEPLOYMENT_MODE,
      WORKER_HEALTH_PORT: String(env.WORKER_HEALTH_PORT),
      NEXT_TELEMETRY_DISABLED: "1",
    };
    // Production: apps/web/scripts/serve.mjs, the server the console benchmarks measure (Next.js's
    // own server, in one process per core up to two in local mode, with the render cache in local
    // mode: README "Console benchmarks"). Development: `next dev`.
    const listen = ["-H", env.COPYBACK_HOST, "-p", String(env.COPYBACK_PORT)];
    const [webCommand, webArgs] =
      env.COPYBACK_WEB_MODE === "development"
        ? [path.join(root, "apps/web/node_modules/.bin/next"), ["dev", ...listen]]
        : [process.execPath, [path.join(root, "apps/web/scripts/serve.mjs"), ...listen]];
    children.push(
      startChild("web", webCommand, webArgs, {
        cwd: path.join(root, "apps/web"),
        env: { ...childEnv, ...authEnv, ...localConsole?.webEnv, NODE_ENV: env.COPYBACK_WEB_MODE },
      }),
    );
    const web = children[0]!;
    void web.exited.then((code) => {
      if (!stopping) {
        say(`web exited unexpectedly (code ${code}); stopping`);
        void shutdown(1);
      }
    });
    // The worker: started again when it dies on its own; its reconciler recovers at start what the
    // dead one left (README "Recovery": orphaned runs, interrupted copybacks, holds).
    const crashes: number[] = [];
    const startWorker = () => {
      // `node --import tsx` rather than the tsx CLI: one process, so signals reach the worker itself.
      const worker = startChild("worker", process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: path.join(root, "apps/worker"), env: childEnv });
      children.push(worker);
      void worker.exited.then((code) => {
        if (stopping) return;
        const at = children.indexOf(worker);
        if (at >= 0) children.splice(at, 1);
        const exit = code === null ? `signal ${worker.process.signalCode ?? "unknown"}` : `code ${code}`;
        crashes.push(Date.now());
        const decision = decideWorkerRestart(crashes, Date.now());
        if (decision.kind === "give_up") {
          say(`worker exited unexpectedly (${exit}), ${decision.crashesInWindow} times in 10 minutes; stopping`);
          void shutdown(1);
          return;
        }
        say(`worker exited unexpectedly (${exit}); starting it again in ${decision.delayMs / 1000} s (its recovery picks up what it left)`);
        setTimeout(() => {
          if (!stopping) startWorker();
        }, decision.delayMs);
      });
    };
    startWorker();

    await waitForHttp(`${url}/api/health`, { timeoutMs: 120_000, isAlive: () => !stopping });
    await waitForHttp(`http://127.0.0.1:${env.WORKER_HEALTH_PORT}/readyz`, { timeoutMs: 60_000, isAlive: () => !stopping });
    say(`Copyback is running at ${url}  (ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s; Ctrl-C stops it)`);
    if (localConsole) say(localConsole.signInLine);
  } catch (error) {
    say(`failed to start: ${error instanceof Error ? error.message : String(error)}`);
    await shutdown(1);
  }
}

await main();
