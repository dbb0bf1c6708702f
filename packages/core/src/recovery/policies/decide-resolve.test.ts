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
});
