import { describe, expect, it } from "vitest";
import { MergeConflictError } from "../../src/copyback/merge/errors";
import { CopybackWriteError } from "../../src/copyback/merge/errors";
import { UnsafeArchiveError } from "../../src/copyback/archive/errors";
import { DomainError } from "../../src/errors";
import { decideCopybackFailure, decideFinalizeStart, nextFinalizationAttemptAt, type FinalizeSnapshot } from "../../src/finalization/finalize-policy";

const now = new Date("2026-11-30T12:00:00Z");
const snap = (patch: Partial<FinalizeSnapshot>): FinalizeSnapshot => ({
  phase: "result_accepted",
  resultId: "r1",
  nextAttemptAt: null,
  barrier: false,
  now,
  ...patch,
});

describe("decideFinalizeStart", () => {
  it.each([
    [{ phase: null }, { kind: "not_finalizable", reason: "no_coordinator" }],
    [{ phase: "committed" as const, barrier: true }, { kind: "already_committed" }],
    [{ phase: "terminal_failure" as const, barrier: true }, { kind: "not_finalizable", reason: "terminal_failure" }],
    [{ phase: "observed" as const, resultId: null }, { kind: "not_finalizable", reason: "no_accepted_result" }],
    [{ phase: "result_accepted" as const }, { kind: "copyback", from: "result_accepted" }],
    [{ phase: "workspace_finalizing" as const }, { kind: "copyback", from: "workspace_finalizing" }],
    [{ phase: "arbitrating" as const }, { kind: "not_finalizable", reason: "barrier_missing" }],
    [{ phase: "arbitrating" as const, barrier: true }, { kind: "arbitrate", from: "arbitrating" }],
  ])("%o -> %o", (patch, expected) => {
    expect(decideFinalizeStart(snap(patch))).toEqual(expected);
  });

  it("R-OWN-4 a barrier read under ownership skips the export and goes straight to arbitration", () => {
    expect(decideFinalizeStart(snap({ phase: "workspace_finalizing", barrier: true }))).toEqual({ kind: "arbitrate", from: "workspace_finalizing" });
    expect(decideFinalizeStart(snap({ phase: "retryable_failure", barrier: true }))).toEqual({ kind: "arbitrate", from: "retryable_failure" });
  });

  it("R-OWN-3 a retryable failure whose retry time has not come starts nothing; a due one resumes", () => {
    const later = new Date(now.getTime() + 1000);
    expect(decideFinalizeStart(snap({ phase: "retryable_failure", nextAttemptAt: later }))).toEqual({ kind: "not_finalizable", reason: "retry_not_due" });
    expect(decideFinalizeStart(snap({ phase: "retryable_failure", nextAttemptAt: now }))).toEqual({ kind: "copyback", from: "retryable_failure" });
  });
});

describe("decideCopybackFailure", () => {
  const ctx = { failuresBefore: 0, now };

  it("a merge conflict is a conflict with its structured list", () => {
    const conflicts = [{ path: "a.txt", kind: "both_changed" as const, detail: "changed on both sides" }];
    expect(decideCopybackFailure(new MergeConflictError(conflicts), ctx)).toEqual({ kind: "conflict", code: "workspace_merge_conflict", conflicts });
  });

  it("R-RR-1 exhausted failures before host writes are retryable with a retry time", () => {
    const decision = decideCopybackFailure(new DomainError("unavailable", "provider_export_failed", "down"), ctx);
    expect(decision).toEqual({ kind: "retryable", code: "provider_export_failed", nextAttemptAt: new Date(now.getTime() + 30_000), failures: 1 });
  });

  it("R-RR-1 unsafe archives, after-write and unclassified failures are terminal", () => {
    expect(decideCopybackFailure(new UnsafeArchiveError([]), ctx)).toEqual({ kind: "terminal", code: "unsafe_archive" });
    expect(decideCopybackFailure(new CopybackWriteError(new Error("x"), "apply"), ctx)).toEqual({ kind: "terminal", code: "copyback_write_failed" });
    expect(decideCopybackFailure(new Error("strange"), ctx)).toEqual({ kind: "terminal", code: "workspace_copyback_unclassified" });
  });

  it("a provider refusal no retry can change is terminal, not a provider hiccup", () => {
    expect(decideCopybackFailure(new DomainError("unavailable", "provider_capability_missing", "no"), ctx)).toEqual({ kind: "terminal", code: "provider_capability_missing" });
  });

  it("retry delays grow and are capped at 15 minutes", () => {
    const delay = (attempt: number) => nextFinalizationAttemptAt(now, attempt).getTime() - now.getTime();
    expect([1, 2, 3].map(delay)).toEqual([30_000, 120_000, 480_000]);
    expect(delay(50)).toBe(15 * 60_000);
  });
});
