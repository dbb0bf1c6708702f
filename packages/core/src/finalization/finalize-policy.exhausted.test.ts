import { describe, expect, it } from "vitest";
import { DomainError } from "../errors";
import { decideCopybackFailure, MAX_TRANSIENT_EXPORT_FAILURES, transientFailuresOf } from "./finalize-policy";
import { EXPORT_RETRY_EXHAUSTED_CODE } from "../records/coordinator-phases";

describe("decideCopybackFailure: the retry budget", () => {
  const transient = new DomainError("unavailable", "provider_export_failed", "the provider dropped the export");
  const now = new Date("2026-12-01T10:00:00Z");
  it("R-EX-1: a transient failure is retryable while fewer than three transient failures are recorded", () => {
    for (let failuresBefore = 0; failuresBefore < MAX_TRANSIENT_EXPORT_FAILURES - 1; failuresBefore++) {
      expect(decideCopybackFailure(transient, { failuresBefore, now })).toMatchObject({ kind: "retryable", code: "provider_export_failed", failures: failuresBefore + 1 });
    }
  });
  it("R-EX-1: the third transient failure exhausts the budget, naming the transport failure", () => {
    expect(decideCopybackFailure(transient, { failuresBefore: MAX_TRANSIENT_EXPORT_FAILURES - 1, now })).toEqual({
      kind: "exhausted",
      code: EXPORT_RETRY_EXHAUSTED_CODE,
      lastCode: "provider_export_failed",
      attempts: MAX_TRANSIENT_EXPORT_FAILURES,
    });
  });
  it("R-EX-1: the boundary: the second transient failure is retryable, the third exhausts", () => {
    expect(decideCopybackFailure(transient, { failuresBefore: 1, now })).toMatchObject({ kind: "retryable", failures: 2 });
    expect(decideCopybackFailure(transient, { failuresBefore: 2, now })).toMatchObject({ kind: "exhausted", attempts: 3 });
  });
  it("R-EX-1: the backoff follows the failures (30 s after the first failure, 2 min after the second)", () => {
    const first = decideCopybackFailure(transient, { failuresBefore: 0, now });
    expect(first).toMatchObject({ kind: "retryable", nextAttemptAt: new Date(now.getTime() + 30_000) });
    const second = decideCopybackFailure(transient, { failuresBefore: 1, now });
    expect(second).toMatchObject({ kind: "retryable", nextAttemptAt: new Date(now.getTime() + 120_000) });
  });
  it("R-EX-1: a terminal failure stays terminal whatever the count", () => {
    expect(decideCopybackFailure(new DomainError("conflict", "provider_capability_missing", "x"), { failuresBefore: 2, now }).kind).toBe("terminal");
  });
});

describe("transientFailuresOf: the count kept in the coordinator's failure_detail", () => {
  it("R-EX-1: reads the recorded count; nothing recorded (a fresh or re-admitted coordinator) is 0", () => {
    expect(transientFailuresOf({ attempt: 4, transientFailures: 2 })).toBe(2);
    expect(transientFailuresOf(null)).toBe(0);
    expect(transientFailuresOf({ readmission: { requestId: "r" } })).toBe(0);
  });
  it("R-EX-1: a retryable failure written before the count existed ({ attempt } only) counts its attempt number, as the budget did then", () => {
    expect(transientFailuresOf({ attempt: 2 })).toBe(2);
  });
  it("R-EX-1: a malformed count grants no extra retries: it reads as the budget spent", () => {
    expect(transientFailuresOf({ transientFailures: -1 })).toBe(MAX_TRANSIENT_EXPORT_FAILURES);
    expect(transientFailuresOf({ transientFailures: "2" })).toBe(MAX_TRANSIENT_EXPORT_FAILURES);
  });
});
