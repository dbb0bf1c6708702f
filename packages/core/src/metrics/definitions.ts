// Every Prometheus metric of Copyback, defined in one place. The counters
// and histograms below live in this process (`processRegistry`) and are fed by the observe*
// functions in observe.ts from the code that does the work; the gauges that describe the
// database (runs, open recovery actions, retained sandboxes) are computed on scrape by
// database-gauges.ts, because a GROUP BY at scrape time is cheaper than keeping them current in
// every process that changes a row. The worker's listener and the console's /api/metrics serve the
// same names (endpoint.ts).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** The counters, histograms and process gauges of this process. */
export const processRegistry = new Registry();

// Node's own process metrics (process_resident_memory_bytes, nodejs_eventloop_lag_seconds, ...)
// under their standard names, so existing dashboards read them.
collectDefaultMetrics({ register: processRegistry });

const SECONDS_FAST = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const SECONDS_SLOW = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600];
const BYTES = [0, 1024, 16_384, 262_144, 1_048_576, 16_777_216, 67_108_864, 268_435_456, 1_073_741_824, 5_368_709_120];

export const metrics = {
  sweepDuration: new Histogram({
    name: "copyback_reconciler_sweep_duration_seconds",
    help: "Wall time of one reconciler sweep in one pass: selection of its due units and handling them.",
    labelNames: ["sweep"] as const,
    buckets: SECONDS_FAST,
    registers: [processRegistry],
  }),
  sweepBatchSize: new Histogram({
    name: "copyback_reconciler_sweep_batch_size",
    help: "Due units one sweep selected in one pass (the batch is bounded; a full batch means more are due).",
    labelNames: ["sweep"] as const,
    buckets: [0, 1, 2, 5, 10, 20, 50, 100, 200, 500],
    registers: [processRegistry],
  }),
  sweepUnits: new Counter({
    name: "copyback_reconciler_units_total",
    help: "Units the reconciler handled, by sweep and outcome word (idle units are not counted; failures are outcome=error).",
    labelNames: ["sweep", "outcome"] as const,
    registers: [processRegistry],
  }),
  sweepSelectionFailures: new Counter({
    name: "copyback_reconciler_selection_failures_total",
    help: "Sweep selections that failed (the database did not answer); the next pass tries again.",
    labelNames: ["sweep"] as const,
    registers: [processRegistry],
  }),
  finalizationBusy: new Counter({
    name: "copyback_finalization_busy_skips_total",
    help: "Finalization attempts skipped without a write because another owner holds the run (R-OWN-2): the advisory lock is held, the recorded owner lives, or its receipt changed.",
    labelNames: ["reason"] as const,
    registers: [processRegistry],
  }),
  mergeLockWait: new Histogram({
    name: "copyback_directory_merge_lock_wait_seconds",
    help: "Time from asking for a host workspace's directory-merge lock until it was held (outcome=acquired) or given up (timeout, aborted, error).",
    labelNames: ["outcome"] as const,
    buckets: SECONDS_FAST,
    registers: [processRegistry],
  }),
  mergeDuration: new Histogram({
    name: "copyback_merge_duration_seconds",
    help: "Wall time of one merge of a validated snapshot into a host workspace, lock wait included.",
    labelNames: ["outcome"] as const,
    buckets: SECONDS_FAST,
    registers: [processRegistry],
  }),
  mergeWrittenBytes: new Histogram({
    name: "copyback_merge_written_bytes",
    help: "Bytes of the files one merge wrote into a host workspace (0 for an unchanged snapshot).",
    buckets: BYTES,
    registers: [processRegistry],
  }),
  snapshotBytes: new Histogram({
    name: "copyback_snapshot_bytes",
    help: "Bytes of all files in the sandbox snapshot one merge compared with its baseline.",
    buckets: BYTES,
    registers: [processRegistry],
  }),
  workspaceOperationDuration: new Histogram({
    name: "copyback_workspace_operation_duration_seconds",
    help: "Wall time of one workspace operation of a run, from its row being opened to being closed by the same process; phase=workspace_finalize is the copyback (export, validation, merge, retries).",
    labelNames: ["phase", "status"] as const,
    buckets: SECONDS_SLOW,
    registers: [processRegistry],
  }),
  providerCalls: new Counter({
    name: "copyback_provider_calls_total",
    help: "Calls into provider plugins, by plugin id and operation.",
    labelNames: ["plugin", "operation"] as const,
    registers: [processRegistry],
  }),
  providerCallFailures: new Counter({
    name: "copyback_provider_call_failures_total",
    help: "Provider plugin calls that failed, by plugin id, operation and stable error code.",
    labelNames: ["plugin", "operation", "code"] as const,
    registers: [processRegistry],
  }),
  liveConnections: new Gauge({
    name: "copyback_live_connections",
    help: "Open server-sent-event connections of this console process (live updates).",
    registers: [processRegistry],
    collect() {
      this.set(liveConnectionSource());
    },
  }),
};

let liveConnectionSource: () => number = () => 0;

/** The console's live hub reports its open connections here (read on scrape). */
export function setLiveConnectionSource(source: () => number): void {
  liveConnectionSource = source;
}
