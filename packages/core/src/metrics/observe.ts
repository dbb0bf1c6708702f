// What the working code reports to the metrics (definitions.ts). Each function is a few
// arithmetic steps on in-memory counters and never throws: a metric must not fail the work it
// describes. Label values are bounded sets (sweep names, outcome words, plugin ids, stable error
// codes), never ids or paths.
import { metrics } from "./definitions";

const CODE = /^[A-Za-z0-9_.-]{1,80}$/;

/** The stable code of an error for a label (domain and engine errors carry one), else "unclassified". */
export function errorLabel(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && CODE.test(code) ? code : "unclassified";
}

function guarded(fn: () => void): void {
  try {
    fn();
  } catch {
    // a metric never fails the work it measures
  }
}

export interface SweepPassObservation {
  sweep: string;
  seconds: number;
  /** Units selected (the batch). */
  batchSize: number;
  /** outcome word -> units (idle units left out, as in the pass result). */
  outcomes: Readonly<Record<string, number>>;
  selectionFailed?: boolean;
}

export function observeSweepPass(o: SweepPassObservation): void {
  guarded(() => {
    metrics.sweepDuration.observe({ sweep: o.sweep }, o.seconds);
    if (o.selectionFailed) {
      metrics.sweepSelectionFailures.inc({ sweep: o.sweep });
      return;
    }
    metrics.sweepBatchSize.observe({ sweep: o.sweep }, o.batchSize);
    for (const [outcome, count] of Object.entries(o.outcomes)) {
      if (count > 0) metrics.sweepUnits.inc({ sweep: o.sweep, outcome }, count);
    }
  });
}

export function observeFinalizationBusy(reason: string): void {
  guarded(() => metrics.finalizationBusy.inc({ reason }));
}

export function observeMergeLockWait(seconds: number, outcome: "acquired" | "timeout" | "aborted" | "error"): void {
  guarded(() => metrics.mergeLockWait.observe({ outcome }, seconds));
}

export function observeMerge(o: { outcome: "applied" | "unchanged" | "conflict" | "failed"; seconds: number; writtenBytes?: number; snapshotBytes?: number }): void {
  guarded(() => {
    metrics.mergeDuration.observe({ outcome: o.outcome }, o.seconds);
    if (o.writtenBytes !== undefined) metrics.mergeWrittenBytes.observe(o.writtenBytes);
    if (o.snapshotBytes !== undefined) metrics.snapshotBytes.observe(o.snapshotBytes);
  });
}

export function observeWorkspaceOperation(phase: string, status: string, seconds: number): void {
  guarded(() => metrics.workspaceOperationDuration.observe({ phase, status }, seconds));
}

export function observeProviderCall(plugin: string, operation: string, error?: unknown): void {
  guarded(() => {
    metrics.providerCalls.inc({ plugin, operation });
    if (error !== undefined) metrics.providerCallFailures.inc({ plugin, operation, code: errorLabel(error) });
  });
}
