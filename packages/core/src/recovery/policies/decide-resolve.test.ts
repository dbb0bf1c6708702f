import { describe, expect, it } from "vitest";
import { OWNER_UNVERIFIED_CAUSE } from "../causes";
import { decideResolve } from "./decide-resolve";

describe("decideResolve", () => {
  it("R-ATT-3: generic resolution can never dismiss an unverified copyback owner hold", () => {
    expect(decideResolve({ cause: OWNER_UNVERIFIED_CAUSE })).toMatchObject({ kind: "reject", code: "hold_requires_attestation" });
  });
  it("other causes wait for the file-recovery rules", () => {
    expect(decideResolve({ cause: "native_workspace_sync_out_retry_exhausted" })).toEqual({ kind: "not_implemented" });
  });
  it("R-ATT-3: the refusal points to the attestation route and says the committed copyback resolves the hold", () => {
    expect(decideResolve({ cause: OWNER_UNVERIFIED_CAUSE })).toEqual({
      kind: "reject",
      code: "hold_requires_attestation",
      message:
        "An unverified copyback owner hold cannot be resolved here: attest the stop (POST /api/issues/:id/recovery-actions/resume-workspace-finalization); the run's committed copyback then resolves it.",
    });
  });
});
