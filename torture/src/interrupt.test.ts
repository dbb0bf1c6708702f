import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { alive, startTimeOf, type ProcRef } from "./procs";
import { reapLeftovers } from "./reap";
import { killWorkersNow } from "./interrupt";

const children: ChildProcess[] = [];

async function detachedSleeper(): Promise<{ child: ChildProcess; ref: ProcRef }> {
  // Detached as the harness starts its workers: a session of its own, out of reach of a terminal's signal.
  const child = spawn("sleep", ["1000"], { stdio: "ignore", detached: true });
  children.push(child);
  await once(child, "spawn");
  const start = startTimeOf(child.pid as number);
  if (!start) throw new Error("no /proc start time for the child");
  return { child, ref: { pid: child.pid as number, start } };
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

describe("killWorkersNow (an interrupted run takes its workers with it)", () => {
  it("kills every live worker and reaps what the workers left, and counts both", async () => {
    const worker = await detachedSleeper();
    const leftover = await detachedSleeper();
    const exits = [once(worker.child, "exit"), once(leftover.child, "exit")];
    const answer = killWorkersNow({ live: () => [{ pid: worker.ref.pid }], reapLeftovers: () => reapLeftovers([leftover.ref]) });
    expect(answer).toEqual({ killed: 1, reaped: 1 });
    expect(await Promise.all(exits)).toEqual([[null, "SIGKILL"], [null, "SIGKILL"]]);
    expect(alive(worker.ref)).toBe(false);
    expect(alive(leftover.ref)).toBe(false);
  });

  it("a worker that exited meanwhile is counted and skipped without an error", () => {
    expect(killWorkersNow({ live: () => [{ pid: 2 ** 22 + 12345 }], reapLeftovers: () => [] })).toEqual({ killed: 1, reaped: 0 });
  });
});
