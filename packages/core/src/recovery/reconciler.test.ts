import { describe, expect, it } from "vitest";
import { Reconciler } from "./reconciler";
import { IDLE_OUTCOME, type Sweep } from "./sweeps/sweep";

const sweep = (name: string, units: string[], extra: Partial<Sweep<string>> = {}): Sweep<string> => ({
  name,
  idOf: (u) => u,
  due: async (limit) => units.slice(0, limit),
  handle: async (u) => (u === "quiet" ? IDLE_OUTCOME : "done"),
  ...extra,
});

describe("the reconciler's pass", () => {
  it("is busy when a sweep filled its batch, not when the full batch is a sweep's whole-pass unit", async () => {
    expect((await new Reconciler({ sweeps: [sweep("runs", ["a", "b"])], batchSize: 2 }).pass()).busy).toBe(true);
    expect((await new Reconciler({ sweeps: [sweep("runs", ["a"])], batchSize: 2 }).pass()).busy).toBe(false);
    expect((await new Reconciler({ sweeps: [sweep("holds", ["pass"], { wholePassUnit: true })], batchSize: 1 }).pass()).busy).toBe(false);
  });

  it("counts outcomes but not idle units, and one unit's failure neither stops the pass nor hides the others", async () => {
    const failing = sweep("flaky", ["x", "quiet", "y"], {
      handle: async (u) => {
        if (u === "x") throw new Error("boom");
        return u === "quiet" ? IDLE_OUTCOME : "done";
      },
    });
    const result = await new Reconciler({ sweeps: [failing, sweep("after", ["z"])] }).pass();
    expect(result.outcomes).toEqual({ flaky: { error: 1, done: 1 }, after: { done: 1 } });
    expect(result.errors).toBe(1);
  });
});
