// The worker cgroups as the torture observes them (`--attester harness`), from outside the product:
// which group a worker process is in (/proc/<pid>/cgroup) and which processes a group and every
// group below it hold (cgroup.procs), the same condition the harness signs on.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync, type Dirent } from "node:fs";
import path from "node:path";

/** The absolute directory of the worker's own group (`copyback-worker-*`), or null before it joined one. */
export function workerGroupOf(pid: number, place: { version: 1 | 2; mountPoint: string }): string | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/cgroup`, "utf8");
  } catch {
    return null;
  }
  for (const line of text.split("\n")) {
    const [id, controllers, p] = line.split(":");
    const ours = place.version === 2 ? id === "0" && controllers === "" : (controllers ?? "").split(",").includes("pids");
    if (ours && p && path.basename(p).startsWith("copyback-worker-")) return path.join(place.mountPoint, p);
  }
  return null;
}

/** Every PID in the group and the groups below it; null when the group does not exist. */
export function groupPids(dir: string): number[] | null {
  const pids: number[] = [];
  const walk = (d: string): boolean => {
    let procs: string;
    try {
      procs = readFileSync(path.join(d, "cgroup.procs"), "utf8");
    } catch {
      return false;
    }
    for (const line of procs.split("\n")) if (line.trim()) pids.push(Number(line));
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      /* removed meanwhile */
    }
    for (const e of entries) if (e.isDirectory()) walk(path.join(d, e.name));
    return true;
  };
  return walk(dir) ? pids : null;
}

/** A `sleep` moved into the group (its PID), or null when the group refused it (the worker gone meanwhile). */
export function placeLeftover(dir: string): number | null {
  const child = spawn("sleep", ["3600"], { stdio: "ignore", detached: true });
  child.unref();
  if (child.pid === undefined) return null;
  try {
    writeFileSync(path.join(dir, "cgroup.procs"), String(child.pid));
    return child.pid;
  } catch {
    child.kill("SIGKILL");
    return null;
  }
}
