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
});
