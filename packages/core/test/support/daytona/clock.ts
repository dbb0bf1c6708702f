// The emulator's notion of "now" for Daytona's lifecycle timers. Tests own it: nothing
// auto-stops, archives or deletes until the test advances it, so timer behaviour is
// deterministic and a 15-minute auto-stop takes no wall time.
export interface EmulatorClock {
  now(): number;
  advance(ms: number): void;
  onAdvance(listener: () => void): void;
}

export function manualClock(startMs = Date.UTC(2026, 0, 1)): EmulatorClock {
  let current = startMs;
  const listeners: Array<() => void> = [];
  return {
    now: () => current,
    advance(ms: number) {
      if (!Number.isFinite(ms) || ms < 0) throw new Error(`clock.advance needs a non-negative number of ms, got ${ms}`);
      current += ms;
      for (const listener of listeners) listener();
    },
    onAdvance(listener) {
      listeners.push(listener);
    },
  };
}
