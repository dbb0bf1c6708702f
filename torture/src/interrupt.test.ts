import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { alive } from "./procs";
import { sleeper } from "./sleepers.test-support";
import { reapLeftovers } from "./reap";
import { killWorkersNow } from "./interrupt";

describe("killWorkersNow (an interrupted run takes its workers with it)", () => {
  it("kills every live worker and reaps what the workers left, and counts both", async () => {
    const worker = await sleeper({ detached: true });
    const leftover = await sleeper({ detached: true });
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
