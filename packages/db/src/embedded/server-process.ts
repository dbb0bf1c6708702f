// The postmaster as a child process: started detached (its own process group, so a Ctrl-C in the
// terminal reaches only our process, which then stops things in its own order), ready when it
// says so, stopped with a fast shutdown (SIGINT: roll back open transactions, checkpoint, exit).
import { spawn, type ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import type { PostgresBinaries } from "./binaries";
import { EmbeddedPostgresError } from "./errors";
import { LISTEN_HOST } from "./layout";
import { alreadyRunningError } from "./live-server";
import { portInUseError } from "./port";
import { spawnIdentity, type ServerUser } from "./server-user";
import { classifyStartFailure } from "./start-failure";

const READY = "database system is ready to accept connections";
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
  log: (line: string) => void;
  readyTimeoutMs?: number;
}): Promise<ServerProcessHandle> {
  const { binaries, user, server, log } = args;
  const settings: Record<string, string> = {
    listen_addresses: LISTEN_HOST,
    // No Unix socket: nothing to clash with another server's socket in /tmp, and every client
    // goes through TCP with the password.
    unix_socket_directories: "",
    lc_messages: "C",
    ...server.settings,
  };
  const argv = [
    "-D",
    server.dataDir,
    "-p",
    String(server.port),
    ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
  ];
  const child = spawn(binaries.postgres, argv, {
    cwd: args.cwd,
    ...spawnIdentity(user),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });

  const recent: string[] = [];
  let exited = false;
  let exitStatus: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let spawnError: Error | undefined;
  // 'exit', not 'close': orphaned backends of a killed postmaster can hold the log pipe open.
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
  // All output has been read once the pipes close (or the spawn itself failed).
  const outputComplete = new Promise<void>((resolve) => {
    child.once("close", () => resolve());
    child.once("error", () => resolve());
  });

  const ready = new Promise<void>((resolve, reject) => {
    let settled = false;
    const onLine = (line: string) => {
      recent.push(line);
      if (recent.length > 40) recent.shift();
      log(line);
      if (!settled && line.includes(READY)) {
        settled = true;
        resolve();
      }
    };
    // Keep reading for the server's whole life: a full, unread pipe would block its logging.
    readLines(child.stdout, onLine);
    readLines(child.stderr, onLine);
    void outputComplete.then(() => {
      if (settled) return;
      settled = true;
      reject(startError(child, recent, server, spawnError));
    });
  });

  const timeoutMs = args.readyTimeoutMs ?? 120_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new EmbeddedPostgresError(
            "START_FAILED",
            `PostgreSQL did not become ready within ${timeoutMs / 1000} s. Last log lines:\n${recent.join("\n")}`,
          ),
        ),
      timeoutMs,
    );
  });
  try {
    await Promise.race([ready, timeout]);
  } catch (error) {
    if (!exited) await stopChild(child, exitedPromise, () => exited);
    throw error;
  } finally {
    clearTimeout(timer);
  }

  // Do not keep our event loop alive for the server; the exit hook stops it when we exit.
  child.unref();
  (child.stdout as Readable & { unref?: () => void }).unref?.();
  (child.stderr as Readable & { unref?: () => void }).unref?.();

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

function readLines(stream: Readable, onLine: (line: string) => void): void {
  let pending = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) if (line.trim().length > 0) onLine(line);
  });
  stream.on("end", () => {
    if (pending.trim().length > 0) onLine(pending);
    pending = "";
  });
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
