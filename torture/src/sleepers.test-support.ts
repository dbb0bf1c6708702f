// Test support: real `sleep` processes standing in for workers and their leftovers, with the
// /proc start time the harness knows them by; killed after each test that made them.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterEach } from "vitest";
import { startTimeOf, type ProcRef } from "./procs";

const children: ChildProcess[] = [];

/** A `sleep 1000`; detached as the harness starts its workers (a session of its own) when asked. */
export async function sleeper(opts: { detached?: boolean } = {}): Promise<{ child: ChildProcess; ref: ProcRef }> {
  const child = spawn("sleep", ["1000"], { stdio: "ignore", detached: opts.detached === true });
  children.push(child);
  await once(child, "spawn");
  const start = startTimeOf(child.pid as number);
  if (!start) throw new Error("no /proc start time for the child");
  return { child, ref: { pid: child.pid as number, start } };
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});
