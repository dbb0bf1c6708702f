import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { alive } from "./procs";
import { sleeper } from "./sleepers.test-support";
import { reapLeftovers } from "./reap";

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
