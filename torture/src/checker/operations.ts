// The one reader of the history's operations (history.ts writes them): each `invoke` line paired
// with its completion by `op` id, in the Jepsen style. Pure. An `info` completion is "may or may not
// have happened": it is neither counted as ok nor as fail; a rule that relies on an operation having
// taken effect takes only ok (`happened`), and a rule that must allow for its effect takes ok and
// info alike (`mayHaveHappened`). An invoke the history never completed (the harness lost the answer)
// reads as info too, and is reported, as is a completion without its invoke or a second completion:
// a history that breaks the pairing cannot be judged as written.
import type { Completion, HistoryEvent } from "../history";

export interface Operation {
  id: number;
  f: string;
  invokedAt: bigint;
  /** The completion's time; null when the history has none. */
  completedAt: bigint | null;
  outcome: Completion;
  /** The invoke's fields, with the completion's over them (without t, ev, type, op). */
  value: Record<string, unknown>;
}

export interface OperationHistory {
  /** In invoke order. */
  operations: Operation[];
  /** Every break of the pairing, one line each. */
  unpaired: string[];
}

const COMPLETIONS = new Set<unknown>(["ok", "fail", "info"]);

/** True for a line of an operation (an invoke or a completion); false for an observation. */
export function isOperationLine(e: HistoryEvent): boolean {
  return typeof e.op === "number" && (e.type === "invoke" || COMPLETIONS.has(e.type));
}

function fieldsOf(e: HistoryEvent): Record<string, unknown> {
  const { t: _t, ev: _ev, type: _type, op: _op, ...fields } = e;
  return fields;
}

export function readOperations(history: readonly HistoryEvent[]): OperationHistory {
  const byId = new Map<number, Operation & { completions: number }>();
  const operations: (Operation & { completions: number })[] = [];
  const unpaired: string[] = [];
  for (const e of history) {
    if (!isOperationLine(e)) continue;
    const id = e.op as number;
    const known = byId.get(id);
    if (e.type === "invoke") {
      if (known) {
        unpaired.push(`operation ${id} (${e.ev}) invoked twice`);
        continue;
      }
      // Until its completion is read, an operation is indeterminate.
      const op = { id, f: e.ev, invokedAt: BigInt(e.t), completedAt: null, outcome: "info" as Completion, value: fieldsOf(e), completions: 0 };
      byId.set(id, op);
      operations.push(op);
      continue;
    }
    if (!known) {
      unpaired.push(`operation ${id} (${e.ev}) completed ${String(e.type)} without an invoke`);
      continue;
    }
    known.completions += 1;
    if (known.completions > 1) {
      unpaired.push(`operation ${id} (${known.f}) completed again: ${String(e.type)} after ${known.outcome}`);
      continue;
    }
    if (e.ev !== known.f) unpaired.push(`operation ${id} invoked as ${known.f} completed as ${e.ev}`);
    known.completedAt = BigInt(e.t);
    known.outcome = e.type as Completion;
    known.value = { ...known.value, ...fieldsOf(e) };
  }
  for (const op of operations) if (op.completions === 0) unpaired.push(`operation ${op.id} (${op.f}) invoked at t=${op.invokedAt} never completed (read as info)`);
  return { operations: operations.map(({ completions: _c, ...op }) => op), unpaired };
}

/** It took effect: an ok completion. */
export const happened = (op: Operation): boolean => op.outcome === "ok";
/** It may have taken effect: ok or info, never a fail. */
export const mayHaveHappened = (op: Operation): boolean => op.outcome !== "fail";

/** The operations' completions by function: ok, fail and info counted apart (an info is neither of the others). */
export function completionsByFunction(operations: readonly Operation[]): Record<string, Record<Completion, number>> {
  const out: Record<string, Record<Completion, number>> = {};
  for (const op of operations) {
    const counts = (out[op.f] ??= { ok: 0, fail: 0, info: 0 });
    counts[op.outcome] += 1;
  }
  return out;
}

/** The faults that took effect (ok), by kind, and how many ended unknown (info). */
export function faultsOf(operations: readonly Operation[]): { byKind: Record<string, number>; indeterminate: number; kills: Operation[] } {
  const byKind: Record<string, number> = {};
  let indeterminate = 0;
  const kills: Operation[] = [];
  for (const op of operations) {
    if (op.f !== "fault") continue;
    if (op.outcome === "info") indeterminate += 1;
    if (!happened(op)) continue;
    const kind = String(op.value.kind);
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    // A kill_host (two-host mode) SIGKILLs every worker of one host: its `pids`.
    if (kind === "kill_worker" || kind === "kill_host") kills.push(op);
  }
  return { byKind, indeterminate, kills };
}
