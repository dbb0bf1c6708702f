import { describe, expect, it } from "vitest";
import { decideDiscard, type DiscardSnapshot } from "./decide-discard";

const lease = { status: "released", providerLeaseId: "sbx-1", held: true, claimedByOther: false };
const snapshot = (over: Partial<DiscardSnapshot["lease"] & object> = {}, openActionIds: string[] = ["a1", "a2"]): DiscardSnapshot => ({ lease: { ...lease, ...over }, openActionIds });
const request = { providerLeaseId: "sbx-1", acknowledgedActionIds: ["a2", "a1"], reason: "files copied by hand to the host" };

describe("decideDiscard", () => {
  it("admits a retained sandbox whose allocation id matches and whose open actions are all acknowledged", () => {
    expect(decideDiscard(snapshot(), request)).toEqual({ kind: "admit", actionIds: ["a1", "a2"] });
    expect(decideDiscard(snapshot({}, []), { ...request, acknowledgedActionIds: [] })).toEqual({ kind: "admit", actionIds: [] });
  });

  it.each([
    ["lease_not_found", { lease: null, openActionIds: [] }, request],
    ["sandbox_already_destroyed", snapshot({ status: "destroyed" }), request],
    ["lease_failed", snapshot({ status: "failed" }), request],
    ["allocation_unnamed", snapshot({ providerLeaseId: null }), request],
    ["allocation_mismatch", snapshot(), { ...request, providerLeaseId: "sbx-2" }],
    ["sandbox_not_retained", snapshot({ held: false }), request],
    ["cleanup_in_progress", snapshot({ claimedByOther: true }), request],
    ["copyback_pending", snapshot({ copybackPending: "workspace_finalizing" }), request],
    ["reason_required", snapshot(), { ...request, reason: "  " }],
    ["acknowledgement_missing", snapshot(), { ...request, acknowledgedActionIds: ["a1"] }],
    ["acknowledgement_unknown", snapshot(), { ...request, acknowledgedActionIds: ["a1", "a2", "zz"] }],
  ] as const)("refuses with %s", (code, s, r) => {
    expect(decideDiscard(s as DiscardSnapshot, r)).toMatchObject({ kind: "reject", code });
  });

  it("names what is missing and what is unknown", () => {
    expect(decideDiscard(snapshot(), { ...request, acknowledgedActionIds: ["a1"] })).toMatchObject({ details: { missing: ["a2"] } });
    expect(decideDiscard(snapshot(), { ...request, acknowledgedActionIds: ["a1", "a2", "zz"] })).toMatchObject({ details: { unknown: ["zz"] } });
  });

  it("an earlier Discard's live claim is refused saying which request holds it and until when (it lapses soon after that request died); another cleanup's claim names only its end", () => {
    const until = "2026-12-10T10:00:30.000Z";
    const refused = decideDiscard(snapshot({ claimedByOther: true, claim: { until, discardRequestId: "r-1" } }), request);
    expect(refused).toMatchObject({ kind: "reject", code: "cleanup_in_progress", details: { discardRequestId: "r-1", claimedUntil: until } });
    expect(refused.kind === "reject" && refused.message).toContain(until);
    expect(decideDiscard(snapshot({ claimedByOther: true, claim: { until, discardRequestId: null } }), request)).toEqual({
      kind: "reject",
      code: "cleanup_in_progress",
      message: "A stop, resume or destroy of this sandbox is in flight; try again when it settled.",
      details: { claimedUntil: until },
    });
    // A lapsed claim (its request is gone) refuses nothing: the repeat is admitted and resumes it.
    expect(decideDiscard(snapshot({ claimedByOther: false, claim: null }), request)).toEqual({ kind: "admit", actionIds: ["a1", "a2"] });
  });
});

describe("decideDiscard while the run's copyback is still to come", () => {
  it.each(["result_accepted", "workspace_finalizing", "arbitrating", "retryable_failure"])("R-ORP-3: refuses during %s, naming the phase, even with every action acknowledged", (phase) => {
    const refused = decideDiscard(snapshot({ copybackPending: phase }), request);
    expect(refused).toMatchObject({ kind: "reject", code: "copyback_pending", details: { phase } });
    expect(refused.kind === "reject" && refused.message).toContain(phase);
  });
  it("R-ORP-3: admits once it settled (no pending phase)", () => {
    expect(decideDiscard(snapshot({ copybackPending: null }), request)).toEqual({ kind: "admit", actionIds: ["a1", "a2"] });
  });
});
