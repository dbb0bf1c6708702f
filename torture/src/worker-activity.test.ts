// What a worker kill would hit, from the running runs (the nemesis aims its kills
// at copybacks and finalizations, and the report counts what each kill hit).
import { describe, expect, it } from "vitest";
import { classifyActivity, hitOf, type ActivityRow } from "./worker-activity";

const row = (runId: string, controllerPid: number | null, phase: string | null, ownerPid: number | null = null): ActivityRow => ({ runId, controllerPid, phase, ownerPid });

describe("classifyActivity", () => {
  it("a receipt counts as a copy for the pid that wrote it, whoever controls the run", () => {
    const activity = classifyActivity([row("takeover", 10, "workspace_finalizing", 20)], [10, 20]);
    expect(activity.get(20)).toEqual({ copying: ["takeover"], finalizing: [], retryWait: [], turn: [] });
    // The controller still drives the run past its result: a finalization, not a turn.
    expect(activity.get(10)).toEqual({ copying: [], finalizing: ["takeover"], retryWait: [], turn: [] });
  });

  it("the controller's own copy is one copy, not also a finalization", () => {
    const activity = classifyActivity([row("own", 10, "workspace_finalizing", 10)], [10]);
    expect(activity.get(10)).toEqual({ copying: ["own"], finalizing: [], retryWait: [], turn: [] });
  });

  it("phases before the result are the turn; admission and arbitration are finalization; a retry's wait is apart", () => {
    const activity = classifyActivity(
      [row("fresh", 10, null), row("observed", 10, "observed"), row("admitted", 10, "result_accepted"), row("arbitrating", 10, "arbitrating"), row("waiting", 10, "retryable_failure")],
      [10],
    );
    expect(activity.get(10)).toEqual({ copying: [], finalizing: ["admitted", "arbitrating"], retryWait: ["waiting"], turn: ["fresh", "observed"] });
  });

  it("runs of other processes are left out, and every asked pid gets an entry", () => {
    const activity = classifyActivity([row("elsewhere", 99, null, 98)], [10]);
    expect([...activity.keys()]).toEqual([10]);
    expect(activity.get(10)).toEqual({ copying: [], finalizing: [], retryWait: [], turn: [] });
  });
});

describe("hitOf", () => {
  it("a copy before a finalization before a turn before a retry's wait before nothing", () => {
    const none = { copying: [], finalizing: [], retryWait: [], turn: [] };
    expect(hitOf({ ...none, copying: ["a"], turn: ["b"] })).toBe("copy");
    expect(hitOf({ ...none, finalizing: ["a"], turn: ["b"] })).toBe("finalization");
    expect(hitOf({ ...none, turn: ["b"], retryWait: ["c"] })).toBe("turn");
    expect(hitOf({ ...none, retryWait: ["c"] })).toBe("retry_wait");
    expect(hitOf(none)).toBe("idle");
  });
});
