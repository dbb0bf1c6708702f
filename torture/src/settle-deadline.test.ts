import { describe, expect, it } from "vitest";
import { MAX_EXTENSION_MS, nextSettleDeadline, RETRY_MARGIN_MS, settleDeadline } from "./settle-deadline";

describe("the quiet period's deadline follows the product's retry schedule", () => {
  const clock = { startedAt: 1_000_000, baseMs: 150_000 };

  it("is the configured length when no retry is scheduled, or every retry falls well inside it", () => {
    expect(settleDeadline(clock, null)).toBe(1_150_000);
    expect(settleDeadline(clock, 1_000_000 + 30_000)).toBe(1_150_000);
  });

  it("waits for a second transient failure's retry (120 s) scheduled late in the quiet period", () => {
    // The first failure just before the quiet period, the second 30 s into it: due at 150 s.
    const due = clock.startedAt + 30_000 + 120_000;
    expect(settleDeadline(clock, due)).toBe(due + RETRY_MARGIN_MS);
    expect(settleDeadline(clock, due)).toBeGreaterThan(clock.startedAt + clock.baseMs);
  });

  it("never waits more than the cap beyond the configured length", () => {
    expect(settleDeadline(clock, clock.startedAt + 60 * 60_000)).toBe(1_150_000 + MAX_EXTENSION_MS);
  });

  it("keeps a retry's extension after the retried run committed (no retry scheduled any more)", () => {
    const due = clock.startedAt + 149_000;
    let deadline = settleDeadline(clock, null);
    deadline = nextSettleDeadline(clock, deadline, due);
    expect(deadline).toBe(due + RETRY_MARGIN_MS);
    // The retry ran and committed: the next look sees no retryable coordinator. The wait must still
    // leave room for the quiet looks after it (seed 572158792 ended one look after the commit).
    deadline = nextSettleDeadline(clock, deadline, null);
    expect(deadline).toBe(due + RETRY_MARGIN_MS);
    expect(deadline).toBeGreaterThan(clock.startedAt + clock.baseMs);
  });
});
