// The built console (apps/web/scripts/serve.mjs: `next start`, in as many processes as serve.mjs
// chooses for local mode, or COPYBACK_WEB_WORKERS from BENCH_WEB_WORKERS or the caller; production,
// local mode) on a free loopback port for the console benchmarks, with the local board's sign-in cookie (local mode trusts only the person
// holding the console secret: apps/web/src/server/auth/local-console.ts), and the resident memory
// of its whole process group.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LOCAL_CONSOLE_COOKIE, consoleCookieValue } from "../../apps/web/src/server/auth/local-console";
import { webWorkerCount } from "../../apps/web/scripts/web-workers.mjs";

export const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../apps/web");

export function consoleBuilt(): boolean {
  return existsSync(path.join(webDir, ".next", "BUILD_ID"));
}

export interface ConsoleServer {
  base: string;
  /** The process group leader (serve.mjs: `next start` itself, or the primary of its workers). */
  pid: number;
  /** How many `next start` processes serve it. */
  workers: number;
  /** The Cookie header of the trusted local board. */
  cookie: string;
  /** Resident memory of every process in the server's process group, in bytes. */
  rssBytes(): number;
  /** CPU time (user + system) used so far by every process in the server's process group, in ms. */
  cpuMs(): number;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** Sums `measure(pid, statFields)` over the processes whose process group is `pgid` (/proc; processes that vanish are skipped). */
function sumOverGroup(pgid: number, measure: (pid: string, fields: string[]) => number): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command name (which may hold spaces) start after the last ")".
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid) continue;
      total += measure(entry, fields);
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** VmRSS of every process whose process group is `pgid`. */
export function groupRssBytes(pgid: number): number {
  return sumOverGroup(pgid, (pid) => {
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return rss ? Number(rss[1]) * 1024 : 0;
  });
}

/** utime + stime of every process whose process group is `pgid`, in ms (clock ticks of 10 ms on Linux). */
export function groupCpuMs(pgid: number): number {
  // After the command name: state is fields[0], so utime (stat field 14) is fields[11], stime fields[12].
  return sumOverGroup(pgid, (_pid, fields) => (Number(fields[11]) + Number(fields[12])) * 10);
}

/** `nodeArgs` go to the server's node (e.g. `--cpu-prof`, which NODE_OPTIONS refuses; with one worker serve.mjs is `next start`). */
export async function startConsole(databaseUrl: string, extraEnv: Record<string, string> = {}, nodeArgs: string[] = []): Promise<ConsoleServer> {
  const port = await freePort();
  const secret = randomBytes(32).toString("base64url");
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    COPYBACK_DEPLOYMENT_MODE: "local",
    COPYBACK_CONSOLE_SECRET: secret,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    ...(process.env.BENCH_WEB_WORKERS ? { COPYBACK_WEB_WORKERS: process.env.BENCH_WEB_WORKERS } : {}),
    ...extraEnv,
  };
  const workers = webWorkerCount(env, os.availableParallelism());
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, path.join(webDir, "scripts/serve.mjs"), "-H", "127.0.0.1", "-p", String(port)], {
    cwd: webDir,
    env,
    stdio: ["ignore", "ignore", "inherit"],
    detached: true,
  });
  let alive = true;
  child.once("exit", () => (alive = false));
  const base = `http://127.0.0.1:${port}`;
  const pid = child.pid!;
  const stop = async () => {
    try {
      process.kill(-pid, "SIGTERM");
    } catch {
      // already gone
    }
    await new Promise((r) => setTimeout(r, 500));
  };
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (!alive) throw new Error("the console exited before it answered");
    try {
      if ((await fetch(`${base}/api/livez`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`no answer from ${base} within 90 s`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { base, pid, workers, cookie: `${LOCAL_CONSOLE_COOKIE}=${consoleCookieValue(secret)}`, rssBytes: () => groupRssBytes(pid), cpuMs: () => groupCpuMs(pid), stop };
}
