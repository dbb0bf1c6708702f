// Process facts from the OS: is a PID alive, and which server processes work in a directory.
import fs from "node:fs/promises";
import path from "node:path";

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface ServerProcess {
  pid: number;
  ppid: number;
  /** The process title: backends rename themselves "postgres: checkpointer", "postgres: user db ...". */
  title: string;
}

/**
 * Every `postgres` process whose working directory is `dataDir`. A postmaster chdirs into its
 * data directory at start and every backend inherits it, so this finds a cluster's processes
 * whether or not postmaster.pid is still there. Returns undefined where /proc is unavailable.
 * Processes of other OS users are skipped when their cwd is unreadable: the server refuses a
 * data directory it does not own, so they cannot be using ours.
 */
export async function serverProcessesIn(dataDir: string): Promise<ServerProcess[] | undefined> {
  let entries: string[];
  try {
    entries = await fs.readdir("/proc");
  } catch {
    return undefined;
  }
  let target: string;
  try {
    target = await fs.realpath(dataDir);
  } catch {
    return [];
  }
  const found: ServerProcess[] = [];
  await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (entry) => {
        const dir = path.join("/proc", entry);
        try {
          const comm = (await fs.readFile(path.join(dir, "comm"), "utf8")).trim();
          if (comm !== "postgres") return;
          const cwd = await fs.readlink(path.join(dir, "cwd"));
          if (cwd !== target) return;
          const ppid = parseParentPid(await fs.readFile(path.join(dir, "stat"), "utf8"));
          const title = (await fs.readFile(path.join(dir, "cmdline"), "utf8"))
            .replaceAll("\0", " ")
            .trim();
          if (ppid !== undefined) found.push({ pid: Number(entry), ppid, title });
        } catch {
          // gone meanwhile, or not ours to inspect
        }
      }),
  );
  return found.sort((a, b) => a.pid - b.pid);
}

/** /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may contain spaces and parentheses. */
export function parseParentPid(stat: string): number | undefined {
  const rest = stat
    .slice(stat.lastIndexOf(")") + 1)
    .trim()
    .split(/\s+/);
  const ppid = Number(rest[1]);
  return Number.isInteger(ppid) ? ppid : undefined;
}

/**
 * The postmasters among a cluster's processes: not a child of another one of them, and not
 * carrying a backend's title. (Backends orphaned by a killed postmaster are re-parented to init,
 * so the parent test alone would take them for postmasters.)
 */
export function postmastersOf(processes: ServerProcess[]): ServerProcess[] {
  const pids = new Set(processes.map((p) => p.pid));
  return processes.filter((p) => !pids.has(p.ppid) && !p.title.startsWith("postgres: "));
}
