// How long the quiet period waits, pure. The quiet period must outlast the product's own retry
// schedule: a transient export failure just before the quiet period starts is retried 30 s later,
// a second one 120 s after that (finalize-policy.ts nextFinalizationAttemptAt), so a fixed 150 s
// could end before a run that does everything right had its last try (CI, seed 24038588: a run left
// in retryable_failure, "did not settle"). The wait therefore extends to the latest retry the
// product has scheduled, plus a margin for that attempt and the reconciler's quiet passes, and
// never past a hard cap: a schedule that keeps moving out (a retry that never runs) still fails.

/** Time after a scheduled retry for the sweep to pick it up, export, commit and pass quietly 15 times. */
export const RETRY_MARGIN_MS = 60_000;
/** The most the quiet period may grow beyond its configured length (15 min: the schedule's cap). */
export const MAX_EXTENSION_MS = 15 * 60_000;

export interface SettleClock {
  /** When the quiet period started (ms since the epoch). */
  startedAt: number;
  /** The configured quiet period (ms). */
  baseMs: number;
}

/** The deadline now, given the latest next_attempt_at of an unheld retryable coordinator (null: none). */
export function settleDeadline(clock: SettleClock, latestRetryAt: number | null): number {
  const base = clock.startedAt + clock.baseMs;
  if (latestRetryAt === null) return base;
  return Math.min(Math.max(base, latestRetryAt + RETRY_MARGIN_MS), base + MAX_EXTENSION_MS);
}

/**
 * The deadline after a look, never earlier than the one before it. A retry's extension must
 * outlive the retry itself: once the retried run commits, no coordinator is retryable any more,
 * and a deadline computed afresh fell back to the configured length, already past, so the wait
 * ended one quiet look after the commit instead of the 15 it asks for (seeds 85007780 and
 * 572158792 here, and CI's 2065184287: "did not settle" with 0 violations, the retried run
 * committed 1 s before the end).
 */
export function nextSettleDeadline(clock: SettleClock, previous: number, latestRetryAt: number | null): number {
  return Math.max(previous, settleDeadline(clock, latestRetryAt));
}

