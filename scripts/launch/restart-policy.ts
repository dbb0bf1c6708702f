// When the launcher restarts a worker that exited on its own (a crash, an OOM kill, `kill -9`), pure.
// The worker is built to be killed at any moment: a restarted one runs its reconciler at start and
// recovers what the dead one left (orphaned runs, interrupted copybacks, holds for an operator), so
// the console stays up and the user does not have to start everything again. A worker that keeps
// dying (a bad configuration, a database it cannot reach) is not restarted for ever: after
// MAX_CRASHES exits within WINDOW_MS the launcher stops, and says why.
export const RESTART_WINDOW_MS = 10 * 60_000;
export const MAX_CRASHES = 5;
const FIRST_DELAY_MS = 1_000;

export type RestartDecision = { kind: "restart"; delayMs: number; crashesInWindow: number } | { kind: "give_up"; crashesInWindow: number };

/** `crashes`: the times (ms) the worker exited unexpectedly, this one included. */
export function decideWorkerRestart(crashes: readonly number[], now: number): RestartDecision {
  const recent = crashes.filter((at) => now - at < RESTART_WINDOW_MS).length;
  if (recent > MAX_CRASHES) return { kind: "give_up", crashesInWindow: recent };
  // 1 s, 2 s, 4 s, 8 s, 16 s: a crash loop does not spin, a single crash costs a second.
  return { kind: "restart", delayMs: FIRST_DELAY_MS * 2 ** Math.max(0, recent - 1), crashesInWindow: recent };
}
