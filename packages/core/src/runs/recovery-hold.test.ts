import { describe, expect, it } from "vitest";
import { COPYBACK_FAILED_CAUSE, EXPORT_LIMIT_CAUSE, EXPORT_RETRY_EXHAUSTED_CAUSE, FILE_RECOVERY_CAUSE, LEGACY_COPYBACK_REPAIR_CAUSE, OWNER_UNVERIFIED_CAUSE } from "../records/causes";
import { holdReason, holdRefusal } from "./recovery-hold";

describe("holdReason / holdRefusal", () => {
  it("R-RR-7 says, for every hold cause, why ordinary work waits (each its own words)", () => {
    const causes = [FILE_RECOVERY_CAUSE, LEGACY_COPYBACK_REPAIR_CAUSE, OWNER_UNVERIFIED_CAUSE, EXPORT_RETRY_EXHAUSTED_CAUSE, EXPORT_LIMIT_CAUSE, COPYBACK_FAILED_CAUSE];
    const reasons = causes.map(holdReason);
    expect(new Set(reasons).size).toBe(causes.length);
    for (const reason of reasons) expect(reason).not.toBe(holdReason("some_future_cause"));
    expect(holdReason("some_future_cause")).toMatch(/held for recovery/);
  });

  it("R-RR-7 refuses with recovery_hold_open, the reason, and the exact action, run and lease", () => {
    const error = holdRefusal({ id: "a-1", cause: LEGACY_COPYBACK_REPAIR_CAUSE, runId: "r-1", leaseId: "l-1" }, "Retry cannot start a run");
    expect(error).toMatchObject({ kind: "conflict", code: "recovery_hold_open", details: { actionId: "a-1", cause: LEGACY_COPYBACK_REPAIR_CAUSE, runId: "r-1", leaseId: "l-1" } });
    expect(error.message).toMatch(/waiting for recovery/);
    expect(error.message).toContain(holdReason(LEGACY_COPYBACK_REPAIR_CAUSE));
    expect(error.message).toContain("Retry cannot start a run until it is resolved");
  });
});
