// finalizationAttemptsOf, pure: one row per finalize operation, numbered by its recorded attempt.
import { describe, expect, it } from "vitest";
import { finalizationAttemptsOf } from "./finalization-attempts";

const at = (s: number) => new Date(Date.UTC(2026, 11, 1, 12, 0, s));

describe("finalizationAttemptsOf", () => {
  it("R-EX-1 lists each coordinator attempt with its failure code and time; the last one says the budget was spent", () => {
    const attempts = finalizationAttemptsOf([
      { phase: "workspace_prepare", status: "succeeded", errorCode: null, startedAt: at(0), finishedAt: at(1), metadata: {} },
      { phase: "workspace_finalize", status: "failed", errorCode: "provider_export_failed", startedAt: at(2), finishedAt: at(3), metadata: { attempt: 1 } },
      { phase: "workspace_finalize", status: "failed", errorCode: "provider_export_failed", startedAt: at(4), finishedAt: at(5), metadata: { attempt: 2 } },
      { phase: "workspace_finalize", status: "failed", errorCode: "provider_export_timeout", startedAt: at(6), finishedAt: at(7), metadata: { attempt: 3, exhausted: true } },
    ]);
    expect(attempts).toEqual([
      { attempt: 1, status: "failed", failureCode: "provider_export_failed", startedAt: at(2), finishedAt: at(3), exhausted: false, omitted: false },
      { attempt: 2, status: "failed", failureCode: "provider_export_failed", startedAt: at(4), finishedAt: at(5), exhausted: false, omitted: false },
      { attempt: 3, status: "failed", failureCode: "provider_export_timeout", startedAt: at(6), finishedAt: at(7), exhausted: true, omitted: false },
    ]);
  });

  it("numbers an operation without a recorded attempt by its position; a success carries no failure code", () => {
    expect(
      finalizationAttemptsOf([
        { phase: "workspace_finalize", status: "succeeded", errorCode: "stale", startedAt: at(0), finishedAt: null, metadata: "not an object" },
        { phase: "workspace_finalize", status: "succeeded", errorCode: null, startedAt: at(1), finishedAt: at(2), metadata: { attempt: 1.5, omitted: true } },
      ]),
    ).toEqual([
      { attempt: 1, status: "succeeded", failureCode: null, startedAt: at(0), finishedAt: null, exhausted: false, omitted: false },
      { attempt: 2, status: "succeeded", failureCode: null, startedAt: at(1), finishedAt: at(2), exhausted: false, omitted: true },
    ]);
  });
});
