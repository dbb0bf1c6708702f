// The history: every client operation, nemesis action and observed outcome as one JSON line with
// `t`, CLOCK_MONOTONIC in nanoseconds (process.hrtime.bigint: the same clock in every process of the
// host, so the workers' merge-trace lines interleave correctly). Lines are appended synchronously,
// one write(2) each, to the same file the workers append to.
//
// Operations in the Jepsen style: everything the harness does to the system (a wake, a Stop, a
// Discard, an attestation, a fault, a restart) writes an `invoke` line, then exactly one completion
// line with the same `op` id and `ev`: `ok` (it happened), `fail` (it certainly did not: the product
// refused it, or the process to signal was already gone) or `info` (unknown: the call timed out, the
// connection dropped, the server restarted mid-call; it may or may not have taken effect). What the
// harness only observes (a worker's exit, a run's end, a disk sample, the workers' merge trace) is a
// plain line without `type`. The checker pairs them through one reader (checker/operations.ts).
import { appendFileSync, readFileSync } from "node:fs";

export interface HistoryEvent {
  t: string;
  ev: string;
  [key: string]: unknown;
}

export type Completion = "ok" | "fail" | "info";

export function now(): bigint {
  return process.hrtime.bigint();
}

/** One invoked operation: completed exactly once, by ok, fail or info. */
export class Operation {
  #completed: Completion | null = null;

  constructor(
    private readonly history: History,
    readonly id: number,
    readonly f: string,
  ) {}

  get completed(): Completion | null {
    return this.#completed;
  }

  ok(fields: Record<string, unknown> = {}): bigint {
    return this.#complete("ok", fields);
  }

  fail(fields: Record<string, unknown> = {}): bigint {
    return this.#complete("fail", fields);
  }

  info(fields: Record<string, unknown> = {}): bigint {
    return this.#complete("info", fields);
  }

  #complete(type: Completion, fields: Record<string, unknown>): bigint {
    // A second completion would leave the reader to guess which one is true: a harness bug.
    if (this.#completed) throw new Error(`operation ${this.id} (${this.f}) completed twice: ${this.#completed}, then ${type}`);
    this.#completed = type;
    return this.history.append(this.f, { ...fields, type, op: this.id });
  }
}

export class History {
  #nextOp = 1;

  constructor(readonly file: string) {}

  append(ev: string, fields: Record<string, unknown> = {}): bigint {
    const t = now();
    appendFileSync(this.file, `${JSON.stringify({ t: t.toString(), ev, ...fields })}\n`);
    return t;
  }

  /** Writes the invoke line of a new operation `f`; the caller completes the answer. */
  invoke(f: string, fields: Record<string, unknown> = {}): Operation {
    const id = this.#nextOp++;
    this.append(f, { ...fields, type: "invoke", op: id });
    return new Operation(this, id, f);
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
