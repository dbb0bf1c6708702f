import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { alive, startTimeOf, type ProcRef } from "./procs";
import { reapLeftovers } from "./reap";

const children: ChildProcess[] = [];

async function sleeper(): Promise<{ child: ChildProcess; ref: ProcRef }> {
  const child = spawn("sleep", ["1000"], { stdio: "ignore" });
  children.push(child);
  await once(child, "spawn");
  const start = startTimeOf(child.pid as number);
  if (!start) throw new Error("no /proc start time for the child");
  return { child, ref: { pid: child.pid as number, start } };
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

describe("reapLeftovers", () => {
  it("kills a leftover the harness saw, also a stopped one, and answers it", async () => {
    const { child, ref } = await sleeper();
    process.kill(ref.pid, "SIGSTOP");
    const exited = once(child, "exit");
    expect(reapLeftovers([ref])).toEqual([ref]);
    expect(await exited).toEqual([null, "SIGKILL"]);
    expect(alive(ref)).toBe(false);
  });

  it("never signals a PID recorded with another start time (reused), nor one that is gone", async () => {
    const { ref } = await sleeper();
    const gone = await sleeper();
    const exited = once(gone.child, "exit");
    gone.child.kill("SIGKILL");
    await exited;
    const sent: number[] = [];
    const reaped = reapLeftovers([{ pid: ref.pid, start: `${ref.start}0` }, gone.ref], (pid) => sent.push(pid));
    expect(reaped).toEqual([]);
    expect(sent).toEqual([]);
    expect(alive(ref)).toBe(true);
  });
});
