// R-OWN-3, R-OWN-4, R-RR-1: where finalizeRun starts under ownership and what a failed copyback
// leaves behind, at the edges the table in test/finalization/finalize-policy.test.ts leaves out.
import { describe, expect, it } from "vitest";
import type { FinalizationPhase } from "@copyback/db/client";
import { DomainError } from "../errors";
import { decideCommitRetry, decideCopybackFailure, decideFinalizeStart, MAX_TRANSIENT_EXPORT_FAILURES, MERGE_CONFLICT_CODE, nextFinalizationAttemptAt, type FinalizeSnapshot } from "./finalize-policy";
import { EXPORT_RETRY_EXHAUSTED_CODE } from "../records/coordinator-phases";

const now = new Date("2026-11-30T12:00:00Z");
const at = (offsetMs: number) => new Date(now.getTime() + offsetMs);
const snap = (patch: Partial<FinalizeSnapshot>): FinalizeSnapshot => ({
  phase: "result_accepted",
  resultId: "r1",
  nextAttemptAt: null,
  barrier: false,
  now,
  ...patch,
});

const RESUMABLE: FinalizationPhase[] = [
  "result_accepted",
  "workspace_finalizing",
  "arbitrating",
  "retryable_failure",
];

describe("decideFinalizeStart", () => {
  it.each(RESUMABLE)(
    "R-OWN-3: %s without a result id is not finalizable, whatever the barrier says",
    (phase) => {
      for (const barrier of [false, true]) {
        expect(decideFinalizeStart(snap({ phase, resultId: null, barrier }))).toEqual({
          kind: "not_finalizable",
          reason: "no_accepted_result",
        });
      }
    },
  );

  it("R-OWN-3: an observed coordinator has no accepted result to finalize, even with a result id and a barrier", () => {
    expect(decideFinalizeStart(snap({ phase: "observed" }))).toEqual({
      kind: "not_finalizable",
      reason: "no_accepted_result",
    });
    expect(decideFinalizeStart(snap({ phase: "observed", barrier: true }))).toEqual({
      kind: "not_finalizable",
      reason: "no_accepted_result",
    });
  });

  it("R-OWN-4: committed and terminal coordinators are final, also without a result id", () => {
    expect(decideFinalizeStart(snap({ phase: "committed", resultId: null }))).toEqual({
      kind: "already_committed",
    });
    expect(decideFinalizeStart(snap({ phase: "terminal_failure", resultId: null }))).toEqual({
      kind: "not_finalizable",
      reason: "terminal_failure",
    });
  });

  it("R-OWN-3: the retry time holds back only a retryable failure; other phases with a stale retry time start", () => {
    const later = at(60_000);
    expect(decideFinalizeStart(snap({ phase: "result_accepted", nextAttemptAt: later }))).toEqual({
      kind: "copyback",
      from: "result_accepted",
    });
    expect(
      decideFinalizeStart(snap({ phase: "workspace_finalizing", nextAttemptAt: later })),
    ).toEqual({
      kind: "copyback",
      from: "workspace_finalizing",
    });
    expect(
      decideFinalizeStart(snap({ phase: "arbitrating", nextAttemptAt: later, barrier: true })),
    ).toEqual({
      kind: "arbitrate",
      from: "arbitrating",
    });
  });

  it("R-OWN-3: a retry is due at its time exactly, not a millisecond before; without a time it is due now", () => {
    expect(decideFinalizeStart(snap({ phase: "retryable_failure", nextAttemptAt: at(1) }))).toEqual(
      {
        kind: "not_finalizable",
        reason: "retry_not_due",
      },
    );
    expect(decideFinalizeStart(snap({ phase: "retryable_failure", nextAttemptAt: at(0) }))).toEqual(
      { kind: "copyback", from: "retryable_failure" },
    );
    expect(
      decideFinalizeStart(snap({ phase: "retryable_failure", nextAttemptAt: at(-1) })),
    ).toEqual({ kind: "copyback", from: "retryable_failure" });
    expect(decideFinalizeStart(snap({ phase: "retryable_failure", nextAttemptAt: null }))).toEqual({
      kind: "copyback",
      from: "retryable_failure",
    });
  });

  it("R-OWN-3: a retry that is not due starts nothing even when the barrier exists", () => {
    expect(
      decideFinalizeStart(
        snap({ phase: "retryable_failure", nextAttemptAt: at(1), barrier: true }),
      ),
    ).toEqual({
      kind: "not_finalizable",
      reason: "retry_not_due",
    });
  });

  it("R-OWN-4: the barrier sends every resumable phase to arbitration; without it only arbitrating stops", () => {
    for (const phase of RESUMABLE) {
      expect(decideFinalizeStart(snap({ phase, barrier: true }))).toEqual({
        kind: "arbitrate",
        from: phase,
      });
    }
    expect(decideFinalizeStart(snap({ phase: "arbitrating" }))).toEqual({
      kind: "not_finalizable",
      reason: "barrier_missing",
    });
    expect(decideFinalizeStart(snap({ phase: "result_accepted" }))).toEqual({
      kind: "copyback",
      from: "result_accepted",
    });
  });
});

describe("nextFinalizationAttemptAt", () => {
  const delay = (attempt: number) =>
    nextFinalizationAttemptAt(now, attempt).getTime() - now.getTime();

  it("R-RR-1: 30 s after the first failed attempt, times four per attempt, at most 15 minutes", () => {
    expect([1, 2, 3, 4, 5, 6].map(delay)).toEqual([
      30_000, 120_000, 480_000, 900_000, 900_000, 900_000,
    ]);
    expect(delay(11)).toBe(900_000);
    expect(delay(1_000)).toBe(900_000);
  });

  it("R-RR-1: a count below one never schedules earlier than the first delay", () => {
    expect(delay(0)).toBe(30_000);
    expect(delay(-5)).toBe(30_000);
  });
});

describe("decideCopybackFailure", () => {
  const coded = (code: string, extra: Record<string, unknown> = {}) =>
    Object.assign(new Error(code), { code, ...extra });

  it.each([
    "provider_capability_missing",
    "provider_plugin_mismatch",
    "provider_identity_mismatch",
  ])("R-RR-1: %s is a refusal no retry changes: terminal with its own code", (code) => {
    expect(
      decideCopybackFailure(new DomainError("unavailable", code, "no"), { failuresBefore: 0, now }),
    ).toEqual({ kind: "terminal", code });
  });

  it("R-RR-1: another provider error is retryable, scheduled from the transient failures counted", () => {
    expect(
      decideCopybackFailure(new DomainError("unavailable", "provider_export_failed", "down"), { failuresBefore: 1, now }),
    ).toEqual({
      kind: "retryable",
      code: "provider_export_failed",
      nextAttemptAt: at(120_000),
      failures: 2,
    });
  });

  it("R-RR-1: a held merge lock and a dropped transfer are retryable", () => {
    expect(
      decideCopybackFailure(coded("directory_merge_lock_timeout"), { failuresBefore: 0, now }),
    ).toEqual({
      kind: "retryable",
      code: "directory_merge_lock_timeout",
      nextAttemptAt: at(30_000),
      failures: 1,
    });
    expect(decideCopybackFailure(coded("ECONNRESET"), { failuresBefore: 1, now })).toEqual({
      kind: "retryable",
      code: "ECONNRESET",
      nextAttemptAt: at(120_000),
      failures: 2,
    });
  });

  it("R-RR-1: without a usable code of its own a failure is named after its class", () => {
    const wrapped = Object.assign(new Error("outer"), {
      code: "not a code!",
      cause: coded("ETIMEDOUT"),
    });
    expect(decideCopybackFailure(wrapped, { failuresBefore: 0, now })).toEqual({
      kind: "retryable",
      code: "workspace_copyback_transfer_dropped",
      nextAttemptAt: at(30_000),
      failures: 1,
    });
    expect(
      decideCopybackFailure(Object.assign(new Error("denied"), { cause: coded("EACCES") }), { failuresBefore: 0, now }),
    ).toEqual({
      kind: "terminal",
      code: "workspace_copyback_permission_denied",
    });
    expect(decideCopybackFailure("a string", { failuresBefore: 0, now })).toEqual({
      kind: "terminal",
      code: "workspace_copyback_unclassified",
    });
  });

  it("R-RR-1: a provider failure after host writes began is terminal", () => {
    expect(
      decideCopybackFailure(coded("provider_export_failed", { hostWritesBegan: true }), { failuresBefore: 0, now }),
    ).toEqual({
      kind: "terminal",
      code: "provider_export_failed",
    });
  });

  it("R-RR-1: the conflict code is the stable workspace_merge_conflict", () => {
    expect(MERGE_CONFLICT_CODE).toBe("workspace_merge_conflict");
  });

  it("R-EX-1: three transient failures, then the spec's native_workspace_sync_out_retry_exhausted", () => {
    expect(MAX_TRANSIENT_EXPORT_FAILURES).toBe(3);
    expect(EXPORT_RETRY_EXHAUSTED_CODE).toBe("native_workspace_sync_out_retry_exhausted");
    expect(
      decideCopybackFailure(Object.assign(new Error("reset"), { code: "ECONNRESET" }), { failuresBefore: 2, now }),
    ).toEqual({
      kind: "exhausted",
      code: "native_workspace_sync_out_retry_exhausted",
      lastCode: "ECONNRESET",
      attempts: 3,
    });
  });
});

describe("decideCommitRetry: a failed commit's own schedule", () => {
  const now = new Date("2026-12-04T00:00:00.000Z");
  it("R-OWN-3: counts commit failures, not attempts, and keeps the rest of failure_detail", () => {
    expect(decideCommitRetry({ attempt: 7, transientFailures: 2 }, now)).toEqual({
      nextAttemptAt: new Date(now.getTime() + 30_000),
      failureDetail: { attempt: 7, transientFailures: 2, commitFailures: 1 },
    });
    expect(decideCommitRetry({ commitFailures: 1 }, now).nextAttemptAt).toEqual(new Date(now.getTime() + 120_000));
  });
  it("R-OWN-3: reads no detail, or an unreadable count, as no commit failure before", () => {
    expect(decideCommitRetry(null, now).failureDetail).toEqual({ commitFailures: 1 });
    expect(decideCommitRetry({ commitFailures: "3" }, now).failureDetail).toEqual({ commitFailures: 1 });
    expect(decideCommitRetry(["x"], now).failureDetail).toEqual({ commitFailures: 1 });
  });
});
