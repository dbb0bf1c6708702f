// /proc helpers: process start times (to tell a reused PID from the process the harness knows),
// descendants, and the agents among them.
import { readFileSync, readdirSync } from "node:fs";

export interface ProcRef {
  pid: number;
  start: string;
}

function stat(pid: number): { ppid: number; start: string; state: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "?", ppid: Number(fields[1]), start: fields[19] ?? "" };
  } catch {
    return null;
  }
}

export function startTimeOf(pid: number): string | null {
  return stat(pid)?.start ?? null;
}

/** True when the process with this PID and start time still exists (a zombie counts as gone). */
export function alive(ref: ProcRef): boolean {
  const s = stat(ref.pid);
  return s !== null && s.start === ref.start && s.state !== "Z";
}

export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/** Every descendant of `root` (children, grandchildren, ...), with start times. */
export function descendants(root: number): ProcRef[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (!s) continue;
    const list = children.get(s.ppid) ?? [];
    list.push(pid);
    children.set(s.ppid, list);
  }
  const out: ProcRef[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const start = startTimeOf(pid);
    if (start) out.push({ pid, start });
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}
