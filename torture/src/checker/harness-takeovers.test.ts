// The `--attester harness` rules (harness-takeovers.ts), through check() as the suite calls it, on
// hand-made histories of the watch loop's lines: each case fails without its rule.
import { describe, expect, it } from "vitest";
import type { HistoryEvent } from "../history";
import { cleanState, kinds, R1 } from "./fixtures";
import { holdResolutions } from "./harness-takeovers";
import { OWNER_UNVERIFIED } from "./verdict";

const G = "/sys/fs/cgroup/pids/copyback-worker-00000000000000aa";
const hold = (t: number, status: string, proof: string | null, actionId = "a1"): HistoryEvent => ({ t: String(t), ev: "harness.hold", actionId, runId: R1, status, group: G, proof });
const group = (t: number, procs: number): HistoryEvent => ({ t: String(t), ev: "harness.group", group: G, procs });

describe("harness takeovers (issue 22 part 4)", () => {
  it("R-RW-3: a takeover through a harness receipt while a process of the dead owner's group still lives is takeover_while_group_live", () => {
    const history = [hold(10, "active", null), group(20, 2), hold(30, "resolved", "harness_receipt"), group(40, 1)];
    expect(kinds(cleanState(), history)).toEqual(["takeover_while_group_live"]);
    // The proof is written at the takeover, while the hold is still open: judged from then.
    expect(kinds(cleanState(), [hold(10, "active", null), hold(30, "active", "harness_receipt"), group(40, 1), hold(50, "resolved", "harness_receipt")])).toEqual(["takeover_while_group_live"]);
  });

  it("R-RW-3: a takeover observed after the group emptied is no violation", () => {
    const history = [hold(10, "active", null), group(20, 2), group(30, 0), hold(40, "resolved", "harness_receipt")];
    expect(kinds(cleanState(), history)).toEqual([]);
  });

  it("R-RW-2 R-RW-3: a hold still open at the end whose owner's group was last seen empty is harness_takeover_missing; one whose group still holds a process is not", () => {
    const state = { ...cleanState(), actions: [{ id: "a1", runId: R1, cause: OWNER_UNVERIFIED, status: "active" }] };
    // The open hold also breaks other rules of this clean state (committed but held...): only the harness kinds are compared.
    const harnessKinds = (history: HistoryEvent[]) => kinds(state, history).filter((k) => k === "harness_takeover_missing" || k === "takeover_while_group_live");
    expect(harnessKinds([hold(10, "active", null), group(20, 1), group(30, 0)])).toEqual(["harness_takeover_missing"]);
    expect(harnessKinds([hold(10, "active", null), group(20, 1)])).toEqual([]);
    // Taken over (the proof is on the hold), its copyback still retrying: not missing (seed 7).
    expect(harnessKinds([hold(10, "active", null), group(20, 0), hold(30, "active", "harness_receipt")])).toEqual([]);
  });

  it("R-RW-3 R-UI-1: a harness refusal recorded after the hold's proof is refusal_after_proof; one recorded before it is not", () => {
    const line = (t: number, checkedAt: string): HistoryEvent => ({ ...hold(t, "active", "harness_receipt"), attestedAt: "2026-12-07T12:00:00.000Z", check: { code: "owner_changed", checkedAt } });
    expect(kinds(cleanState(), [hold(10, "active", null), line(20, "2026-12-07T12:00:00.500Z")])).toEqual(["refusal_after_proof"]);
    // The deployment_live refusals that precede the proof are the normal path.
    expect(kinds(cleanState(), [hold(10, "active", null), line(20, "2026-12-07T11:59:58.000Z")])).toEqual([]);
  });

  it("counts each hold by its last line: harness receipt (open or resolved), operator attestation, otherwise, still open and unattested", () => {
    const history = [hold(1, "active", null, "a1"), hold(2, "resolved", "harness_receipt", "a1"), hold(3, "resolved", "operator", "a2"), hold(4, "resolved", null, "a3"), hold(5, "active", null, "a4"), hold(6, "active", "harness_receipt", "a5")];
    expect(holdResolutions(history)).toEqual({ harnessReceipt: 2, operatorAttestation: 1, otherwise: 1, openAtLastLook: 1 });
  });
});
