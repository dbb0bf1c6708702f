// Writable cgroups for an exec's memory and process limits (resource-limits.ts). Each exec gets
// its own child group under the controller's group of this process (so it stays inside whatever
// limits the controller itself runs under): cgroup v1 `memory` and `pids` hierarchies, or the
// v2 unified hierarchy where this process's group delegates those controllers. The agent joins
// it before its command starts (a tiny sh wrapper moves itself in and execs), so everything it
// forks is counted. After the exec the hit counters are read and the groups removed. Where none
// is writable (no permission, no controller) the rlimit fallbacks apply.
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rmdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface CgroupParent {
  version: 1 | 2;
  dir: string;
}

interface MountedHierarchy {
  version: 1 | 2;
  mountPoint: string;
  controllers: string[];
}

export async function hierarchies(): Promise<MountedHierarchy[]> {
  const text = await readFile("/proc/self/mountinfo", "utf8").catch(() => "");
  const out: MountedHierarchy[] = [];
  for (const line of text.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const mountPoint = left.split(" ")[4];
    const [fstype, , superOptions = ""] = right.split(" ");
    if (!mountPoint) continue;
    if (fstype === "cgroup2") out.push({ version: 2, mountPoint, controllers: [] });
    if (fstype === "cgroup") out.push({ version: 1, mountPoint, controllers: superOptions.split(",") });
  }
  return out;
}

export async function ownGroups(): Promise<{ v2: string | null; v1: Map<string, string> }> {
  return parseProcCgroup(await readFile("/proc/self/cgroup", "utf8").catch(() => ""));
}

/** A `/proc/PID/cgroup` text: the v2 path, and each v1 controller's path. */
export function parseProcCgroup(text: string): { v2: string | null; v1: Map<string, string> } {
  const v1 = new Map<string, string>();
  let v2: string | null = null;
  for (const line of text.split("\n")) {
    const [id, controllers, path] = line.split(":");
    if (path === undefined) continue;
    if (id === "0" && controllers === "") v2 = path;
    else for (const c of (controllers ?? "").split(",")) v1.set(c, path);
  }
  return { v2, v1 };
}

async function probe(dir: string): Promise<boolean> {
  const test = join(dir, `copyback-probe-${randomBytes(4).toString("hex")}`);
  try {
    await mkdir(test);
    await rmdir(test);
    return true;
  } catch {
    return false;
  }
}

export async function findParent(controller: "memory" | "pids"): Promise<CgroupParent | null> {
  const mounts = await hierarchies();
  const own = await ownGroups();
  const v1 = mounts.find((m) => m.version === 1 && m.controllers.includes(controller));
  const v1Path = own.v1.get(controller);
  if (v1 && v1Path !== undefined) {
    const dir = join(v1.mountPoint, v1Path);
    if (await probe(dir)) return { version: 1, dir };
  }
  const v2 = mounts.find((m) => m.version === 2);
  if (v2 && own.v2 !== null) {
    const dir = join(v2.mountPoint, own.v2);
    const delegated = (await readFile(join(dir, "cgroup.subtree_control"), "utf8").catch(() => "")).split(/\s+/);
    if (delegated.includes(controller) && (await probe(dir))) return { version: 2, dir };
  }
  return null;
}

const found = new Map<string, Promise<CgroupParent | null>>();

/**
 * Forgets the probed parents: after this process moved into another group (worker-cgroup.ts),
 * each exec's groups must be made under the new one, so its processes stay inside it.
 */
export function forgetCgroupParents(): void {
  found.clear();
}

/** The writable parent group for a controller, probed once per process. */
export function cgroupParent(controller: "memory" | "pids"): Promise<CgroupParent | null> {
  let p = found.get(controller);
  if (!p) {
    p = findParent(controller);
    found.set(controller, p);
  }
  return p;
}

export interface ExecCgroups {
  /** Which limits a cgroup enforces on this exec. */
  memory: boolean;
  pids: boolean;
  /** The files the agent's wrapper writes `0` (itself) to, one per group (joinFileOf). */
  joinFiles: string[];
  /** Reads the hit counters: which limits were hit during the exec. */
  hits(): Promise<{ memory: boolean; processes: boolean }>;
  /** Removes the groups (once nothing runs in them). */
  remove(): Promise<void>;
}

/**
 * Removes empty `copyback-*` groups a controller that died (or a group that emptied late) left
 * behind. rmdir succeeds only on a group without processes, so a running exec's is never touched;
 * a group made a moment ago (its agent not yet joined, here or by another controller) is left.
 */
const SWEEP_MIN_AGE_MS = 5 * 60_000;
async function sweepLeftovers(parent: string): Promise<void> {
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    if (!name.startsWith("copyback-") || name.startsWith("copyback-probe-")) continue;
    const dir = join(parent, name);
    const info = await stat(dir).catch(() => null);
    if (!info || Date.now() - info.ctimeMs < SWEEP_MIN_AGE_MS) continue;
    await rmdir(dir).catch(() => undefined);
  }
}

const counter = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1] ?? "0");

/** Creates this exec's groups with their limits; null when no limit needs a cgroup. */
export async function createExecCgroups(opts: { memoryBytes: number | null; processes: number | null }): Promise<ExecCgroups | null> {
  const name = `copyback-${randomBytes(8).toString("hex")}`;
  const made: Array<{ kind: "memory" | "pids"; version: 1 | 2; dir: string }> = [];
  try {
    if (opts.memoryBytes !== null) {
      const parent = await cgroupParent("memory");
      if (parent) {
        await sweepLeftovers(parent.dir);
        const dir = join(parent.dir, name);
        await mkdir(dir);
        made.push({ kind: "memory", version: parent.version, dir });
        if (parent.version === 1) {
          await writeFile(join(dir, "memory.limit_in_bytes"), String(opts.memoryBytes));
          // No swap beyond the limit where the kernel accounts it.
          await writeFile(join(dir, "memory.memsw.limit_in_bytes"), String(opts.memoryBytes)).catch(() => undefined);
        } else {
          await writeFile(join(dir, "memory.max"), String(opts.memoryBytes));
          await writeFile(join(dir, "memory.swap.max"), "0").catch(() => undefined);
        }
      }
    }
    if (opts.processes !== null) {
      const parent = await cgroupParent("pids");
      if (parent) {
        // In v2 one group carries both controllers.
        const shared = parent.version === 2 ? made.find((m) => m.version === 2) : undefined;
        const dir = shared?.dir ?? join(parent.dir, name);
        if (!shared) {
          await sweepLeftovers(parent.dir);
          await mkdir(dir);
        }
        made.push({ kind: "pids", version: parent.version, dir });
        await writeFile(join(dir, "pids.max"), String(opts.processes));
      }
    }
  } catch (error) {
    await Promise.all([...new Set(made.map((m) => m.dir))].map((dir) => rmdir(dir).catch(() => undefined)));
    throw error;
  }
  if (made.length === 0) return null;
  const dirs = [...new Set(made.map((m) => m.dir))];
  return {
    memory: made.some((m) => m.kind === "memory"),
    pids: made.some((m) => m.kind === "pids"),
    joinFiles: dirs.map((dir) => joinFileOf(made.find((m) => m.dir === dir)!.version, dir)),
    async hits() {
      let memory = false;
      let processes = false;
      for (const m of made) {
        if (m.kind === "memory") {
          const text = await readFile(join(m.dir, m.version === 1 ? "memory.oom_control" : "memory.events"), "utf8").catch(() => "");
          memory ||= counter(text, "oom_kill") > 0;
        } else {
          processes ||= counter(await readFile(join(m.dir, "pids.events"), "utf8").catch(() => ""), "max") > 0;
        }
      }
      return { memory, processes };
    },
    async remove() {
      for (const dir of dirs) {
        for (let i = 0; i < 80; i += 1) {
          try {
            await rmdir(dir);
            break;
          } catch {
            // Still populated for a moment after the last process was reaped.
            await new Promise((r) => setTimeout(r, 25));
          }
        }
      }
    },
  };
}

/**
 * Where the wrapper moves itself into a group. cgroup v1: `tasks`, which moves the writing thread
 * alone; the wrapper (sh) has one thread, so that is the whole process, and the kernel skips the
 * global threadgroup lock whose write side waits for an RCU grace period (measured here: 10-25 ms
 * on every exec after a quiet second, against about 1 ms; it was most of the spawn in the wake
 * benchmark). cgroup v2 has no such file for a domain group (cgroup.threads is for threaded
 * groups only): `cgroup.procs`.
 */
export function joinFileOf(version: 1 | 2, dir: string): string {
  return join(dir, version === 1 ? "tasks" : "cgroup.procs");
}

/**
 * The wrapper that joins the groups and then execs the command (no shell parses the command).
 * `0` names the writer itself in both files, so the wrapper is in every group before the exec
 * and everything the command forks starts there.
 */
export function joinCgroupsArgv(joinFiles: readonly string[], argv: readonly string[]): string[] {
  const script = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo 0 > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';
  return ["/bin/sh", "-c", script, "copyback-limits", String(joinFiles.length), ...joinFiles, ...argv];
}
