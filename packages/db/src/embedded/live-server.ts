// Never two postmasters on one data directory: find a live server that owns it (refuse, naming
// its PID), wait out backends orphaned by a crashed postmaster, and clear a stale postmaster.pid
// only once no process uses the directory. Data files are never touched here.
import fs from "node:fs/promises";
import path from "node:path";
import { EmbeddedPostgresError } from "./errors";
import { isProcessAlive, postmastersOf, serverProcessesIn, type ServerProcess } from "./processes";

export interface PidFileContents {
  pid: number;
  port?: number;
  /** Line 8, once the postmaster has written it: `starting`, `ready`, `stopping` or `standby` (what `pg_ctl -w` waits for). */
  status?: string;
}

/** postmaster.pid: line 1 the PID, line 4 the port, line 8 the status (see PostgreSQL's pidfile.h). */
export function parsePidFile(text: string): PidFileContents | undefined {
  const lines = text.split("\n");
  const pid = Number.parseInt(lines[0] ?? "", 10);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const port = Number.parseInt(lines[3] ?? "", 10);
  const status = lines[7]?.trim();
  return {
    pid,
    ...(Number.isInteger(port) ? { port } : {}),
    ...(status ? { status } : {}),
  };
}

export function alreadyRunningError(
  dataDir: string,
  pid: number,
  port: number | undefined,
): EmbeddedPostgresError {
  return new EmbeddedPostgresError(
    "ALREADY_RUNNING",
    `A PostgreSQL server (PID ${pid}${port ? `, port ${port}` : ""}) is already running on ${dataDir}; a second one would corrupt it, so none was started. ` +
      `Use the running one, or stop it first (the process that started it stops it on exit; if that process is gone: kill -INT ${pid}).`,
  );
}

export async function ensureNoLiveServer(
  dataDir: string,
  log: (line: string) => void,
  orphanWaitMs = 15_000,
): Promise<void> {
  const pidPath = path.join(dataDir, "postmaster.pid");
  for (let round = 0; round < 5; round++) {
    const raw = await readIfPresent(pidPath);
    const recorded = raw === undefined ? undefined : parsePidFile(raw);
    const processes = await serverProcessesIn(dataDir);
    if (processes === undefined) {
      // No /proc (macOS): a live PID in the file is taken as a live server. A dead one is left to
      // PostgreSQL, which removes it itself after checking the old shared memory is unused.
      if (recorded && isProcessAlive(recorded.pid))
        throw alreadyRunningError(dataDir, recorded.pid, recorded.port);
      return;
    }
    const postmasters = postmastersOf(processes);
    const owner = postmasters.find((p) => p.pid === recorded?.pid) ?? postmasters[0];
    if (owner) throw alreadyRunningError(dataDir, owner.pid, recorded?.port);
    if (processes.length > 0) {
      // A postmaster was killed; its children exit as soon as they notice. Starting before they
      // are gone would put two generations of processes on the same files.
      log(
        `waiting for ${processes.length} leftover server process(es) of a stopped postmaster to exit: ${pidList(processes)}`,
      );
      if (!(await waitUntilUnused(dataDir, orphanWaitMs))) {
        throw new EmbeddedPostgresError(
          "STALE_SERVER_PROCESSES",
          `Server processes of a crashed PostgreSQL still use ${dataDir} (PIDs ${pidList(processes)}); not starting a new server beside them. Stop them (kill -INT <pid>) and start again.`,
        );
      }
      continue;
    }
    if (raw === undefined) return;
    // No process works in the directory: the lock file is stale (crash, kill -9, reboot, or its
    // PID now belongs to an unrelated process, which PostgreSQL itself would refuse).
    if (await removeIfUnchanged(pidPath, raw)) {
      log(
        `removed a stale postmaster.pid (PID ${recorded?.pid ?? "?"} is not a server of this data directory); PostgreSQL will recover from its log`,
      );
      return;
    }
  }
  throw new EmbeddedPostgresError(
    "START_FAILED",
    `${pidPath} keeps changing: another process is starting a server on ${dataDir}. Try again.`,
  );
}

async function readIfPresent(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Compare-and-delete: move the file aside, then check it is the one we judged stale. If a new
 * server wrote a fresh one in between, put that back (only where no other file appeared).
 */
async function removeIfUnchanged(file: string, judged: string): Promise<boolean> {
  const aside = `${file}.stale-${process.pid}`;
  try {
    await fs.rename(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  const moved = await fs.readFile(aside, "utf8");
  if (moved !== judged) {
    await fs.link(aside, file).catch(() => undefined);
    await fs.rm(aside, { force: true });
    return false;
  }
  await fs.rm(aside, { force: true });
  return true;
}

// Re-scans rather than probing PIDs: an exited child that nobody reaps yet (a zombie) still
// answers kill(pid, 0) but no longer has a working directory.
async function waitUntilUnused(dataDir: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (((await serverProcessesIn(dataDir)) ?? []).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function pidList(processes: ServerProcess[]): string {
  return processes.map((p) => p.pid).join(", ");
}
