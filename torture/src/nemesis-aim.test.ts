// Where an aimed worker kill lands: a worker copying or finalizing a run no kill
// has met yet; past the window, one without an agent mid-turn, the one started last.
import { describe, expect, it } from "vitest";
import { aimAt, missTarget } from "./nemesis-aim";
import { Rng } from "./rng";
import type { WorkerActivity } from "./worker-activity";

const none = (): WorkerActivity => ({ copying: [], finalizing: [], retryWait: [], turn: [] });
const act = (a: Partial<WorkerActivity>): WorkerActivity => ({ ...none(), ...a });

describe("aimAt", () => {
  it("a copying worker first, then a finalizing one, never a worker with only turns", () => {
    const rng = new Rng(1);
    expect(aimAt(new Map([[1, act({ turn: ["t"] })], [2, act({ finalizing: ["f"] })], [3, act({ copying: ["c"] })]]), () => false, rng)).toBe(3);
    expect(aimAt(new Map([[1, act({ turn: ["t"] })], [2, act({ finalizing: ["f"] })]]), () => false, rng)).toBe(2);
    expect(aimAt(new Map([[1, act({ turn: ["t"] })], [2, act({ retryWait: ["w"] })], [3, none()]]), () => false, rng)).toBeNull();
  });

  it("a spared run does not count (one a kill already met, one armed to fail into the retry path)", () => {
    const rng = new Rng(1);
    const activity = new Map([[1, act({ copying: ["spared"] })], [2, act({ finalizing: ["fresh"] })]]);
    expect(aimAt(activity, (r) => r === "spared", rng)).toBe(2);
    expect(aimAt(activity, () => true, rng)).toBeNull();
  });

  it("of the copying workers, the one with the fewest agents mid-turn (they would only lose their runs)", () => {
    for (let seed = 1; seed <= 20; seed++) {
      expect(aimAt(new Map([[1, act({ copying: ["a"], turn: ["x"] })], [2, act({ copying: ["b"] })], [3, act({ copying: ["c"], turn: ["y", "z"] })]]), () => false, new Rng(seed))).toBe(2);
    }
  });
});

describe("missTarget", () => {
  it("a worker without an agent mid-turn, the one started last (a booting worker loses the least)", () => {
    const activity = new Map([[1, act({ turn: ["t"] })], [2, none()], [3, act({ retryWait: ["w"] })]]);
    const started = new Map([[1, 900], [2, 100], [3, 500]]);
    for (let seed = 1; seed <= 20; seed++) expect(missTarget(activity, started, false, new Rng(seed))).toBe(3);
  });

  it("while every worker has an agent mid-turn it waits, and takes one at its last chance", () => {
    const activity = new Map([[1, act({ turn: ["a"] })], [2, act({ copying: ["c"], turn: ["b"] })]]);
    const started = new Map([[1, 1], [2, 2]]);
    expect(missTarget(activity, started, false, new Rng(1))).toBeNull();
    expect([1, 2]).toContain(missTarget(activity, started, true, new Rng(1)));
    expect(missTarget(new Map(), started, true, new Rng(1))).toBeNull();
  });
});
