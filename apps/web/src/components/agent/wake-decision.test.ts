import { describe, expect, it } from "vitest";
import { decideWake, type WakeSnapshot } from "./wake-decision";

const base: WakeSnapshot = { issueStatus: "todo", agentId: "agent-1", latestRunStatus: null };

describe("decideWake", () => {
  it.each([
    ["a todo task with an agent and no run", base],
    ["a task whose last run finished", { ...base, latestRunStatus: "succeeded" }],
    ["a task whose last run failed", { ...base, issueStatus: "blocked", latestRunStatus: "failed" }],
    ["a task in review", { ...base, issueStatus: "in_review", latestRunStatus: "succeeded" }],
  ] as const)("allows %s", (_name, snapshot) => {
    expect(decideWake(snapshot)).toEqual({ kind: "allowed" });
  });

  it.each([
    ["done", { ...base, issueStatus: "done" }, /done/],
    ["cancelled", { ...base, issueStatus: "cancelled" }, /cancelled/],
    ["a queued run", { ...base, latestRunStatus: "queued" }, /already queued/],
    ["a running run", { ...base, latestRunStatus: "running" }, /already working/],
    ["no agent", { ...base, agentId: null }, /Assign an agent/],
    // A closed task says so even while a run of it is still finishing.
    ["done with a running run", { ...base, issueStatus: "done", latestRunStatus: "running" }, /done/],
  ] as const)("disables for %s, with a reason", (_name, snapshot, reason) => {
    const decision = decideWake(snapshot);
    expect(decision.kind).toBe("disabled");
    expect(decision.kind === "disabled" && decision.reason).toMatch(reason);
  });

  it("allows a task whose recovery notice is none", () => {
    expect(decideWake({ ...base, recovery: "none" })).toEqual({ kind: "allowed" });
  });

  // The held run still reads as running: the reason must be the hold, never "already working".
  it.each([
    ["an open hold", "attention", /waiting for recovery/],
    ["a queued restore", "restoring", /being restored/],
  ] as const)("R-ORP-3: disables for %s with the hold as the reason, not 'already working'", (_name, recovery, reason) => {
    for (const snapshot of [
      { ...base, recovery, latestRunStatus: "running" as const },
      { ...base, recovery, issueStatus: "done" as const },
      { ...base, recovery, agentId: null },
    ]) {
      const decision = decideWake(snapshot);
      expect(decision.kind).toBe("disabled");
      expect(decision.kind === "disabled" && decision.reason).toMatch(reason);
      expect(decision.kind === "disabled" && decision.reason).not.toMatch(/already working/);
    }
  });
});
