import { describe, expect, it } from "vitest";
import { DomainError } from "../errors";
import { decideCopybackFailure, EXPORT_RETRY_EXHAUSTED_CODE, MAX_FINALIZATION_ATTEMPTS } from "./finalize-policy";

describe("decideCopybackFailure: the retry budget", () => {
  const transient = new DomainError("unavailable", "provider_export_failed", "the provider dropped the export");
  const now = new Date("2026-12-01T10:00:00Z");
  it("R-EX-1: a transient failure is retryable before the third coordinator attempt", () => {
    for (let attempt = 1; attempt < MAX_FINALIZATION_ATTEMPTS; attempt++) {
      expect(decideCopybackFailure(transient, { attempt, now })).toMatchObject({ kind: "retryable", code: "provider_export_failed" });
    }
  });
  it("R-EX-1: the third attempt's transient failure exhausts the budget, naming the transport failure", () => {
    expect(decideCopybackFailure(transient, { attempt: MAX_FINALIZATION_ATTEMPTS, now })).toEqual({
      kind: "exhausted",
      code: EXPORT_RETRY_EXHAUSTED_CODE,
      lastCode: "provider_export_failed",
      attempts: MAX_FINALIZATION_ATTEMPTS,
    });
  });
  it("R-EX-1: a terminal failure stays terminal whatever the attempt", () => {
    expect(decideCopybackFailure(new DomainError("conflict", "provider_capability_missing", "x"), { attempt: 3, now }).kind).toBe("terminal");
  });
});
