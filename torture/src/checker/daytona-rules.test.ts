import { describe, expect, it } from "vitest";
import type { HistoryEvent } from "../history";
import { check } from "./check";
import { daytonaViolations } from "./daytona-rules";
import type { FinalState } from "./final-state";
import { cleanState, R1 } from "./fixtures";

const SB = "sb-1";
let t = 1_000;
const line = (ev: string, fields: Record<string, unknown>): HistoryEvent => ({ t: String((t += 10)), ev, sandboxId: SB, leaseId: "l1", ...fields });
const act = (action: string, from: string, autoDeleteInterval: number, at: string, extra: Record<string, unknown> = {}) => line("daytona.act", { action, from, autoDeleteInterval, at, confirm: true, ...extra });
const state = (from: string, to: string, by: string, autoDeleteInterval: number, at: string) => line("daytona.state", { from, to, by, autoDeleteInterval, at });

/** R1's lease l1 on Daytona; R1 committed at 00:00:01 (the clean state's fixture). */
function daytonaState(): FinalState {
  const s = cleanState();
  s.leases = s.leases.map((l) => (l.id === "l1" ? { ...l, provider: "daytona", providerLeaseId: `daytona:${SB}?api=x&keyEnv=DAYTONA_K`, sandboxExists: false } : l));
  return s;
}
const kindsOf = (history: HistoryEvent[], final = daytonaState(), discarded: string[] = []) => daytonaViolations(history, final, { discarded: new Set(discarded) }).map((v) => v.kind);

describe("the checker's Daytona rules", () => {
  it("R-DT-1 a stop of a started sandbox whose auto-delete is enabled is a violation; with it disabled, or a refused stop, is not", () => {
    expect(kindsOf([act("stop", "started", 0, "2026-01-01T00:00:00.500Z", { to: "stopping" })])).toEqual(["dt_stop_auto_delete_enabled"]);
    expect(kindsOf([act("stop", "started", 5, "2026-01-01T00:00:00.500Z", { to: "stopping" })])).toEqual(["dt_stop_auto_delete_enabled"]);
    expect(kindsOf([act("stop", "started", -1, "2026-01-01T00:00:00.500Z", { to: "stopping" })])).toEqual([]);
    expect(kindsOf([act("stop", "stopping", 0, "2026-01-01T00:00:00.500Z", { refused: 409 })])).toEqual([]);
    // Through check(): reported beside the other rules.
    const verdict = check([act("stop", "started", 0, "2026-01-01T00:00:00.500Z", { to: "stopping" })], daytonaState());
    expect(verdict.violations.map((v) => v.kind)).toEqual(["dt_stop_auto_delete_enabled"]);
    expect(verdict.violations[0]?.runId).toBe(R1);
  });

  it("R-DT-1 Daytona deleting a sandbox on its own before its run committed is a violation; after the commit it is not", () => {
    const before = [state("stopped", "destroyed", "timer", 0, "2026-01-01T00:00:00.900Z")];
    expect(kindsOf(before)).toEqual(["dt_kept_sandbox_auto_deleted"]);
    expect(kindsOf([state("archived", "destroyed", "nemesis", 1, "2026-01-01T00:00:00.900Z")])).toEqual(["dt_kept_sandbox_auto_deleted"]);
    expect(kindsOf([state("stopped", "destroyed", "timer", 0, "2026-01-01T00:00:05.000Z")])).toEqual([]);
    // A settle is the end of copyback's own delete call, not Daytona acting alone.
    expect(kindsOf([state("destroying", "destroyed", "settle", -1, "2026-01-01T00:00:00.900Z")])).toEqual([]);
    // A lease no agent ran on holds nothing of the task's.
    const unused = daytonaState();
    unused.leases = unused.leases.map((l) => (l.id === "l1" ? { ...l, agentNeverStarted: true } : l));
    expect(kindsOf(before, unused)).toEqual([]);
  });

  it("R-DT-3 deleting a confirmed-stopped sandbox before its run committed is a violation, unless it was started again first or an operator's verified Discard may have done it", () => {
    const stopped = [act("stop", "started", -1, "2026-01-01T00:00:00.100Z", { to: "stopping" }), state("stopping", "stopped", "settle", -1, "2026-01-01T00:00:00.300Z")];
    const deleted = act("delete", "stopped", -1, "2026-01-01T00:00:00.800Z", { to: "destroying" });
    expect(kindsOf([...stopped, deleted])).toEqual(["dt_stopped_allocation_deleted"]);
    // Archived by Daytona after the stop: still the confirmed-stopped allocation (R-DT-4).
    const archived = state("stopped", "archived", "timer", -1, "2026-01-01T00:00:00.500Z");
    expect(kindsOf([...stopped, archived, act("delete", "archived", -1, "2026-01-01T00:00:00.800Z", { to: "destroying" })])).toEqual(["dt_stopped_allocation_deleted"]);
    // Resumed (started) first: a delete of a running sandbox is another rule's business.
    const resumed = [act("start", "stopped", -1, "2026-01-01T00:00:00.400Z", { to: "starting" }), state("starting", "started", "settle", -1, "2026-01-01T00:00:00.600Z")];
    expect(kindsOf([...stopped, ...resumed, act("delete", "started", -1, "2026-01-01T00:00:00.800Z", { to: "destroying" })])).toEqual([]);
    // After the run committed (the release as committed destroys a sandbox kept through a retry).
    expect(kindsOf([...stopped, act("delete", "stopped", -1, "2026-01-01T00:00:02.000Z", { to: "destroying" })])).toEqual([]);
    expect(kindsOf([...stopped, deleted], daytonaState(), ["l1"])).toEqual([]);
    // A stop that never settled with auto-delete disabled is not a confirmed stop.
    expect(kindsOf([act("stop", "started", -1, "2026-01-01T00:00:00.100Z", { to: "stopping" }), act("delete", "stopping", -1, "2026-01-01T00:00:00.800Z", { to: "destroying" })])).toEqual([]);
  });

  it("gives nothing for a history without the emulator's observations", () => {
    expect(kindsOf([])).toEqual([]);
  });
});

describe("Daytona leases in the local rules", () => {
  it("a Daytona sandbox not destroyed that no live lease names is invisible to the Retained list (retained_invisible)", () => {
    const s = daytonaState();
    s.strayDaytonaSandboxes = ["sb-9 (lease l9, stopped)"];
    expect(check([], s).violations.map((v) => v.kind)).toEqual(["retained_invisible"]);
  });

  it("a held run's Daytona sandbox that is gone (the emulator calls it destroyed) is held_sandbox_destroyed", () => {
    const s = daytonaState();
    s.actions = [{ id: "a1", runId: R1, cause: "native_workspace_sync_out_retry_exhausted", status: "active" }];
    s.runs = s.runs.map((r) => (r.id === R1 ? { ...r, status: "failed", errorCode: "native_workspace_sync_out_retry_exhausted" } : r));
    s.coordinators = s.coordinators.map((c) => (c.runId === R1 ? { ...c, phase: "failed", committedAt: null } : c));
    s.leases = s.leases.map((l) => (l.id === "l1" ? { ...l, status: "released", stoppedAndRetained: true, sandboxExists: false } : l));
    expect(check([], s).violations.map((v) => v.kind)).toContain("held_sandbox_destroyed");
  });
});
