// Daytona's auto-stop / auto-archive / auto-delete rules as a pure function of a sandbox's
// record and the time: which lifecycle event is due next and when it fell due. Intervals
// are minutes as in the API: auto-stop 0 = disabled; auto-archive 0 = the maximum (30 days);
// auto-delete negative = disabled, 0 = as soon as the sandbox stops.
import type { SandboxState } from "./state-machine";

export const MINUTE_MS = 60_000;
export const MAX_AUTO_ARCHIVE_MINUTES = 30 * 24 * 60;

export interface TimerRecord {
  state: SandboxState;
  autoStopInterval: number;
  autoArchiveInterval: number;
  autoDeleteInterval: number;
  lastActivityAtMs: number;
  /** When the sandbox last reached `stopped` (kept through archiving). */
  stoppedAtMs: number | null;
}

export type DueEvent = { action: "stop" | "archive" | "delete"; atMs: number };

export function nextDueEvent(record: TimerRecord, nowMs: number): DueEvent | null {
  const candidates: DueEvent[] = [];
  if (record.state === "started" && record.autoStopInterval > 0) {
    candidates.push({ action: "stop", atMs: record.lastActivityAtMs + record.autoStopInterval * MINUTE_MS });
  }
  if ((record.state === "stopped" || record.state === "archived") && record.stoppedAtMs !== null) {
    if (record.autoDeleteInterval >= 0) {
      candidates.push({ action: "delete", atMs: record.stoppedAtMs + record.autoDeleteInterval * MINUTE_MS });
    }
    if (record.state === "stopped") {
      const minutes = record.autoArchiveInterval > 0 ? record.autoArchiveInterval : MAX_AUTO_ARCHIVE_MINUTES;
      candidates.push({ action: "archive", atMs: record.stoppedAtMs + minutes * MINUTE_MS });
    }
  }
  const due = candidates.filter((c) => c.atMs <= nowMs).sort((a, b) => a.atMs - b.atMs || order(a) - order(b));
  return due[0] ?? null;
}

// On a tie, deletion wins: Daytona deletes a sandbox whose delete and archive fall due together.
function order(event: DueEvent): number {
  return event.action === "delete" ? 0 : event.action === "stop" ? 1 : 2;
}
