// The reconciler (DESIGN.md section 8): a list of sweeps run one pass at a time, at worker start
// and then every RECONCILE_INTERVAL_MS. Each sweep takes a bounded batch of due units and handles
// them one by one; one unit's failure is logged and never stops the pass (handlers are
// idempotent: the next pass tries again). An aborted signal ends the pass between units.
import { observeSweepPass } from "../metrics/observe";
import { IDLE_OUTCOME, type Sweep, type SweepLog } from "./sweeps/sweep";

export interface ReconcilerOptions {
  sweeps: readonly Sweep<never>[] | readonly Sweep<any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Units per sweep per pass (default 50). */
  batchSize?: number;
  log?: SweepLog;
}

export interface ReconcilePassResult {
  /** True when some sweep filled its batch (more may be due: pass again without sleeping). */
  busy: boolean;
  /** sweep name -> outcome word -> count. */
  outcomes: Record<string, Record<string, number>>;
  errors: number;
}

export class Reconciler {
  readonly #sweeps: readonly Sweep<unknown>[];
  readonly #batchSize: number;
  readonly #log: SweepLog | undefined;
  #running: Promise<ReconcilePassResult> | null = null;

  constructor(options: ReconcilerOptions) {
    this.#sweeps = options.sweeps as readonly Sweep<unknown>[];
    this.#batchSize = options.batchSize ?? 50;
    this.#log = options.log;
  }

  /** One pass over every sweep. A call while a pass runs joins that pass (one at a time). */
  pass(signal?: AbortSignal): Promise<ReconcilePassResult> {
    this.#running ??= this.#pass(signal).finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #pass(signal?: AbortSignal): Promise<ReconcilePassResult> {
    const result: ReconcilePassResult = { busy: false, outcomes: {}, errors: 0 };
    for (const sweep of this.#sweeps) {
      if (signal?.aborted) break;
      const counts: Record<string, number> = {};
      result.outcomes[sweep.name] = counts;
      // Metrics: each sweep's duration, batch size and outcomes, as the pass saw them.
      const started = performance.now();
      let units: unknown[];
      try {
        units = await sweep.due(this.#batchSize);
      } catch (error) {
        result.errors += 1;
        this.#log?.error({ sweep: sweep.name, err: error }, "reconciler sweep selection failed");
        observeSweepPass({ sweep: sweep.name, seconds: (performance.now() - started) / 1000, batchSize: 0, outcomes: {}, selectionFailed: true });
        continue;
      }
      if (units.length >= this.#batchSize && sweep.wholePassUnit !== true) result.busy = true;
      for (const unit of units) {
        if (signal?.aborted) break;
        try {
          const outcome = await sweep.handle(unit);
          if (outcome !== IDLE_OUTCOME) counts[outcome] = (counts[outcome] ?? 0) + 1;
        } catch (error) {
          result.errors += 1;
          counts.error = (counts.error ?? 0) + 1;
          this.#log?.error({ sweep: sweep.name, unit: sweep.idOf(unit), err: error }, "reconciler unit failed");
        }
      }
      observeSweepPass({ sweep: sweep.name, seconds: (performance.now() - started) / 1000, batchSize: units.length, outcomes: counts });
    }
    return result;
  }
}
