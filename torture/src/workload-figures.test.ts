// The workload's figures under the counts table (its aim: the accepted and commit ratios, the fault
// rate by kind, and what the worker kills hit).
import { describe, expect, it } from "vitest";
import { operation } from "./checker/fixtures";
import type { HistoryEvent } from "./history";
import { formatFigures, workloadFigures } from "./workload-figures";

let clock = 0;
const ev = (name: string, fields: Record<string, unknown> = {}): HistoryEvent => ({ t: String((clock += 10)), ev: name, ...fields });

describe("workloadFigures", () => {
  it("ratios of the runs, faults a minute by kind, and kills by what they hit", () => {
    const events = [
      ...operation("fault", { kind: "kill_worker", hit: "copy" }),
      ...operation("fault", { kind: "kill_worker", hit: "finalization" }),
      ...operation("fault", { kind: "kill_worker", hit: "turn" }),
      ...operation("fault", { kind: "kill_worker", hit: "idle" }),
      ...operation("fault", { kind: "kill_worker" }),
      ...operation("fault", { kind: "disk_full" }),
      // Neither refused nor unknown faults took effect: not in the figures.
      ...operation("fault", { kind: "kill_worker", hit: "copy" }, "fail"),
      ...operation("fault", { kind: "disk_full" }, "info"),
    ];
    const f = workloadFigures(events, { runs: 8, acceptedResults: 5, commits: 3 }, 2);
    expect(f.acceptedRatio).toBe(62.5);
    expect(f.commitRatio).toBe(37.5);
    expect(f.faultsPerMinute).toBe(3);
    expect(f.faultsPerMinuteByKind).toEqual({ disk_full: 0.5, kill_worker: 2.5 });
    // A kill read without an answer (before this field existed, or the database did not answer) is "unknown", left out of the share.
    expect(f.killsByHit).toEqual({ copy: 1, finalization: 1, turn: 1, idle: 1, unknown: 1 });
    expect(f.killsOnFinalizationRatio).toBe(50);
  });

  it("medians of the observed runs' queue, turn and finalization", () => {
    const run = (created: number, started: number, accepted: number | null, committed: number | null) => {
      const iso = (s: number | null) => (s === null ? null : new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString());
      return ev("client.observed", { createdAt: iso(created), startedAt: iso(started), acceptedAt: iso(accepted), committedAt: iso(committed) });
    };
    const f = workloadFigures([run(0, 1, 3, 4), run(0, 2, 5, 9), run(0, 3, null, null)], { runs: 3, acceptedResults: 2, commits: 2 }, 1);
    expect(f.medianSeconds).toEqual({ queued: 2, turn: 3, finalization: 4 });
    expect(formatFigures(f)).toContain("median seconds queued / turn / finalization  2 / 3 / 4");
  });

  it("no runs and no kills print zeros, not NaN", () => {
    const f = workloadFigures([], { runs: 0, acceptedResults: 0, commits: 0 }, 3);
    expect(f.acceptedRatio).toBe(0);
    expect(f.killsOnFinalizationRatio).toBe(0);
    expect(formatFigures(f)).toContain("accepted results / runs");
    expect(formatFigures(f)).not.toContain("NaN");
  });
});
