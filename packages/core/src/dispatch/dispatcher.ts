// The dispatcher: each pass claims up to (concurrency - in flight) queued runs and starts one
// executor per run in the background, so the worker loop's pass stays short (liveness) while runs
// last minutes. Concurrency is a hard bound: a pass never claims more runs than it has free slots,
// so the claimed-but-not-executing window is empty and no run waits in this process.
//
// Stopping (SIGTERM): `drain` stops claiming at once, waits for the runs in flight up to a
// deadline, then aborts them (the executor kills the agent's process group and settles the run)
// and waits a short grace for them to settle. Runs still unsettled after that belong to the
// reconciler of the next issue (the controller identity recorded at claim time says whose they were).
import type { ClaimedRunRef as ClaimedRun } from "./claimed-run";
import { silentDispatchLog, type DispatchLog } from "./dispatch-log";

export interface DispatcherOptions {
  concurrency: number;
  /** Claims up to `limit` queued runs for this controller (claimQueuedRuns). */
  claim: (limit: number) => Promise<ClaimedRun[]>;
  /** Runs one claimed run to a settled state; must not throw (executeRun never does). */
  execute: (claimed: ClaimedRun, signal: AbortSignal) => Promise<void>;
  log?: DispatchLog;
  /** Called whenever a run settles and frees a slot (the worker wakes its loop early). */
  onSlotFreed?: () => void;
  /** How long aborted runs get to settle after the drain deadline (default 10 s). */
  abortGraceMs?: number;
}

export interface DrainResult {
  /** Runs that settled on their own before the deadline. */
  settled: number;
  /** Runs aborted at the deadline (their executors were told to cancel). */
  aborted: number;
  /** Runs still unsettled after the abort grace; left to the reconciler. */
  abandoned: number;
}

/** How long aborted runs get to settle after the drain deadline. */
const ABORT_GRACE_MS = 10_000;

export class Dispatcher {
  readonly concurrency: number;
  readonly #options: DispatcherOptions;
  readonly #log: DispatchLog;
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #abort = new AbortController();
  #draining = false;
  #claiming = 0;

  constructor(options: DispatcherOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new RangeError(`Dispatcher concurrency must be a positive integer, got ${options.concurrency}`);
    }
    this.concurrency = options.concurrency;
    this.#options = options;
    this.#log = options.log ?? silentDispatchLog;
  }

  /** Run ids currently executing in this process. */
  get inFlight(): readonly string[] {
    return [...this.#inFlight.keys()];
  }

  /**
   * Whether this process drives the run now. While a claim is in flight the answer is yes for
   * every run: a run the claim just started is `running` under this controller before it is in
   * the in-flight set, and must never look abandoned to this process's own reconciler.
   */
  executes(runId: string): boolean {
    return this.#claiming > 0 || this.#inFlight.has(runId);
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** One dispatch pass; `busy` when it claimed any run (the loop then passes again without sleeping). */
  async pass(signal: AbortSignal): Promise<{ busy: boolean; claimed: number }> {
    if (signal.aborted || this.#draining) return { busy: false, claimed: 0 };
    const free = this.concurrency - this.#inFlight.size;
    if (free <= 0) return { busy: false, claimed: 0 };
    this.#claiming += 1;
    try {
      const claimed = await this.#options.claim(free);
      // A drain that began while the claim was in flight still lets these runs execute: they are
      // already `running` under this controller, and executing them is the only way they settle.
      for (const run of claimed) this.#start(run);
      return { busy: claimed.length > 0, claimed: claimed.length };
    } finally {
      this.#claiming -= 1;
    }
  }

  /** Stops claiming, waits for the runs in flight up to `timeoutMs`, then aborts what remains. */
  async drain(timeoutMs: number): Promise<DrainResult> {
    this.#draining = true;
    const before = this.#inFlight.size;
    if (before === 0) return { settled: 0, aborted: 0, abandoned: 0 };
    this.#log.info({ inFlight: before, timeoutMs }, "draining runs in flight");
    await waitAll([...this.#inFlight.values()], timeoutMs);
    const aborted = this.#inFlight.size;
    if (aborted > 0) {
      this.#log.warn({ runs: this.inFlight }, "drain deadline passed; cancelling the runs still in flight");
      this.#abort.abort(new Error("worker stopping"));
      await waitAll([...this.#inFlight.values()], this.#options.abortGraceMs ?? ABORT_GRACE_MS);
    }
    const abandoned = this.#inFlight.size;
    if (abandoned > 0) this.#log.error({ runs: this.inFlight }, "runs did not settle before the worker stopped");
    return { settled: before - aborted, aborted, abandoned };
  }

  #start(run: ClaimedRun): void {
    const task = this.#options
      .execute(run, this.#abort.signal)
      .catch((error: unknown) => {
        // executeRun settles its own failures; reaching here is a bug, logged and contained.
        this.#log.error({ runId: run.runId, err: error }, "run executor threw");
      })
      .finally(() => {
        this.#inFlight.delete(run.runId);
        this.#options.onSlotFreed?.();
      });
    this.#inFlight.set(run.runId, task);
  }
}

async function waitAll(tasks: Promise<void>[], timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([Promise.all(tasks), deadline]);
  clearTimeout(timer);
}
