import { describe, expect, it } from "vitest";
import { runTimeline, type TimelineRun } from "./run-timeline";

const t0 = new Date("2026-11-30T10:00:00Z");
const t1 = new Date("2026-11-30T10:00:02Z");
const t2 = new Date("2026-11-30T10:00:09Z");
const queued: TimelineRun = { status: "queued", nativePhase: null, createdAt: t0, startedAt: null, finishedAt: null };

const states = (run: TimelineRun) => runTimeline(run).map((step) => `${step.key}:${step.state}`);

describe("runTimeline", () => {
  it("a queued run: only Queued is done, nothing is current yet", () => {
    expect(states(queued)).toEqual(["queued:done", "working:pending", "result:pending", "copyback:pending", "committed:pending"]);
  });

  it("a running run without a result: the agent is working", () => {
    expect(states({ ...queued, status: "running", nativePhase: "observed", startedAt: t1 })).toEqual([
      "queued:done",
      "working:done",
      "result:current",
      "copyback:pending",
      "committed:pending",
    ]);
  });

  it("follows the coordinator through result_accepted and workspace_finalizing", () => {
    const running = { ...queued, status: "running" as const, startedAt: t1 };
    expect(states({ ...running, nativePhase: "result_accepted" })).toContain("copyback:current");
    expect(states({ ...running, nativePhase: "workspace_finalizing" })).toContain("copyback:current");
    expect(states({ ...running, nativePhase: "arbitrating" })).toContain("committed:current");
  });

  it("a committed run: every step done, finished at the run's end", () => {
    const steps = runTimeline({ status: "succeeded", nativePhase: "committed", createdAt: t0, startedAt: t1, finishedAt: t2 });
    expect(steps.every((step) => step.state === "done")).toBe(true);
    expect(steps.at(-1)).toMatchObject({ key: "committed", at: t2 });
  });

  it("a failed run marks where it stopped and ends with Failed", () => {
    expect(states({ status: "failed", nativePhase: "terminal_failure", createdAt: t0, startedAt: t1, finishedAt: t2 })).toEqual([
      "queued:done",
      "working:done",
      "result:failed",
      "copyback:pending",
      "committed:pending",
      "ended:failed",
    ]);
  });

  it("a run cancelled while queued never started", () => {
    const steps = runTimeline({ ...queued, status: "cancelled", finishedAt: t1 });
    expect(steps.map((s) => `${s.key}:${s.state}`)).toEqual([
      "queued:done",
      "working:failed",
      "result:pending",
      "copyback:pending",
      "committed:pending",
      "ended:failed",
    ]);
  });

  it("a copyback waiting for its retry says so", () => {
    const steps = runTimeline({ status: "running", nativePhase: "retryable_failure", createdAt: t0, startedAt: t1, finishedAt: null });
    expect(steps.map((s) => `${s.key}:${s.state}`)).toEqual([
      "queued:done",
      "working:done",
      "result:done",
      "copyback:current",
      "committed:pending",
    ]);
    expect(steps.find((s) => s.key === "copyback")?.note).toMatch(/retry/);
  });
});
