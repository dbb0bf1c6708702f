// The history (issue 12 item 4): every client operation, nemesis action and observed outcome as
// one JSON line with `t`, CLOCK_MONOTONIC in nanoseconds (process.hrtime.bigint: the same clock in
// every process of the host, so the workers' merge-trace lines interleave correctly). Lines are
// appended synchronously, one write(2) each, to the same file the workers append to.
import { appendFileSync, readFileSync } from "node:fs";

export interface HistoryEvent {
  t: string;
  ev: string;
  [key: string]: unknown;
}

export function now(): bigint {
  return process.hrtime.bigint();
}

export class History {
  constructor(readonly file: string) {}

  append(ev: string, fields: Record<string, unknown> = {}): bigint {
    const t = now();
    appendFileSync(this.file, `${JSON.stringify({ t: t.toString(), ev, ...fields })}\n`);
    return t;
  }
}

/** The history in time order (ties keep file order). Torn last lines (a writer killed mid-line) are skipped. */
export function readHistory(file: string): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      const parsed = JSON.parse(line) as HistoryEvent;
      if (typeof parsed.t === "string" && typeof parsed.ev === "string") events.push(parsed);
    } catch {
      /* a torn line */
    }
  }
  return events.map((e, i) => ({ e, i })).sort((a, b) => (BigInt(a.e.t) < BigInt(b.e.t) ? -1 : BigInt(a.e.t) > BigInt(b.e.t) ? 1 : a.i - b.i)).map(({ e }) => e);
}
