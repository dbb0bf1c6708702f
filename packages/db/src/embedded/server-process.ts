// The postmaster as a child process: started detached (its own process group, so a Ctrl-C in the
// terminal reaches only our process, which then stops things in its own order), ready when its
// postmaster.pid says so (what `pg_ctl -w` waits for), stopped with a fast shutdown (SIGINT: roll
// back open transactions, checkpoint, exit). Its output goes to files only (server-log.ts): no
// pipe of ours is ever on the server's logging path.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import type { PostgresBinaries } from "./binaries";
import { EmbeddedPostgresError } from "./errors";
import { LISTEN_HOST } from "./layout";
import { alreadyRunningError, parsePidFile } from "./live-server";
import { portInUseError } from "./port";
import { COLLECTOR_SETTINGS, openStartLog, readCollectorLog, readStartLog } from "./server-log";
import { spawnIdentity, type ServerUser } from "./server-user";
import { classifyStartFailure } from "./start-failure";

const READY_POLL_MS = 25;
const STOP_GRACE_MS = 60_000;
const IMMEDIATE_GRACE_MS = 10_000;

export interface ServerProcessHandle {
  pid: number;
  /** Resolves when the postmaster has exited, for whatever reason. */
  exited: Promise<void>;
  hasExited(): boolean;
  /** How it ended, once it has: the exit code or the signal that killed it. */
  exitStatus(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Fast shutdown; escalates to immediate shutdown (crash-safe: WAL recovery on next start) if it hangs. */
  stop(): Promise<void>;
  /** Synchronous, for the process 'exit' event: ask for a fast shutdown without waiting. */
  signalStop(): void;
}

export interface ServerSettings {
  dataDir: string;
  port: number;
  /** Extra `-c name=value` settings. */
  settings?: Record<string, string>;
}

export async function startServerProcess(args: {
  binaries: PostgresBinaries;
  user: ServerUser;
  server: ServerSettings;
  cwd: string;
  /** Receives the postmaster's output before its logging collector takes over (server-log.ts). */
  startLog: string;
  readyTimeoutMs?: number;
}): Promise<ServerProcessHandle> {
  const { binaries, user, server } = args;
  const settings: Record<string, string> = {
    listen_addresses: LISTEN_HOST,
    // No Unix socket: nothing to clash with another server's socket in /tmp, and every client
    // goes through TCP with the password.
    unix_socket_directories: "",
    lc_messages: "C",
    ...COLLECTOR_SETTINGS,
    ...server.settings,
  };
  const argv = [
    "-D",
    server.dataDir,
    "-p",
    String(server.port),
    ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
  ];
  const startLog = await openStartLog(args.startLog);
  let child: ChildProcess;
  try {
    child = spawn(binaries.postgres, argv, {
      cwd: args.cwd,
      ...spawnIdentity(user),
      stdio: ["ignore", startLog.handle.fd, startLog.handle.fd],
      detached: true,
    });
  } finally {
    // The child has its own copy of the descriptor.
    await startLog.handle.close();
  }

  let exited = false;
  let exitStatus: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let spawnError: Error | undefined;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      exitStatus = { code, signal };
      exited = true;
      resolve();
    });
    child.once("error", (error) => {
      spawnError = error;
      exited = true;
      resolve();
    });
  });

  const timeoutMs = args.readyTimeoutMs ?? 120_000;
  const pidFile = path.join(server.dataDir, "postmaster.pid");
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (exited) {
        const recent = [
          ...(await readStartLog(args.startLog, startLog.offset)),
          ...(await readCollectorLog(server.dataDir)),
        ];
        throw startError(child, recent, server, spawnError);
      }
      const recorded = parsePidFile(await fs.readFile(pidFile, "utf8").catch(() => ""));
      if (recorded !== undefined && recorded.pid === child.pid && recorded.status === "ready") break;
      if (Date.now() > deadline) {
        const recent = [
          ...(await readStartLog(args.startLog, startLog.offset)),
          ...(await readCollectorLog(server.dataDir)),
        ];
        throw new EmbeddedPostgresError(
          "START_FAILED",
          `PostgreSQL did not become ready within ${timeoutMs / 1000} s. Last log lines (${args.startLog}, ${path.join(server.dataDir, "log")}):\n${recent.join("\n")}`,
        );
      }
      await Promise.race([exitedPromise, new Promise((resolve) => setTimeout(resolve, READY_POLL_MS))]);
    }
  } catch (error) {
    if (!exited) await stopChild(child, exitedPromise, () => exited);
    throw error;
  }

  // Do not keep our event loop alive for the server; the exit hook stops it when we exit.
  child.unref();

  let stopping: Promise<void> | undefined;
  return {
    pid: child.pid ?? -1,
    exited: exitedPromise,
    hasExited: () => exited,
    exitStatus: () => exitStatus,
    stop: () => (stopping ??= stopChild(child, exitedPromise, () => exited)),
    signalStop: () => {
      if (!exited) child.kill("SIGINT");
    },
  };
}

async function stopChild(
  child: ChildProcess,
  exitedPromise: Promise<void>,
  hasExited: () => boolean,
): Promise<void> {
  if (hasExited()) return;
  for (const [signal, graceMs] of [
    ["SIGINT", STOP_GRACE_MS],
    ["SIGQUIT", IMMEDIATE_GRACE_MS],
    ["SIGKILL", Infinity],
  ] as const) {
    child.kill(signal);
    if (await settlesWithin(exitedPromise, graceMs)) return;
  }
}

async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  if (!Number.isFinite(ms)) {
    await promise;
    return true;
  }
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  return result;
}

function startError(
  child: ChildProcess,
  recent: string[],
  server: ServerSettings,
  spawnError: Error | undefined,
): EmbeddedPostgresError {
  if (spawnError) {
    return new EmbeddedPostgresError(
      "START_FAILED",
      `Could not run the PostgreSQL server: ${spawnError.message}`,
      { cause: spawnError },
    );
  }
  const text = recent.join("\n");
  const failure = classifyStartFailure(text);
  if (failure.code === "PORT_IN_USE") return portInUseError(server.port);
  if (failure.code === "ALREADY_RUNNING" && failure.otherPid !== undefined)
    return alreadyRunningError(server.dataDir, failure.otherPid, undefined);
  const how =
    child.exitCode !== null ? `exit code ${child.exitCode}` : `signal ${child.signalCode ?? "?"}`;
  return new EmbeddedPostgresError(
    failure.code,
    `PostgreSQL stopped during startup (${how}); the data directory ${server.dataDir} was left as it was. Server log:\n${text}`,
  );
}
