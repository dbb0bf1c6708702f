// The worker loop (DESIGN.md section 7, after pg-boss and graphile-worker): one pass at a time,
// an abortable sleep between passes, a graceful stop that lets the running pass finish.
import { messageOf } from "@copyback/core/errors";
import { abortableSleep } from "./abortable-sleep";

export interface PassResult {
  /** True when the pass did work and another pass should start without sleeping. */
  busy: boolean;
}

export interface LoopStatus {
  state: "starting" | "running" | "stopping" | "stopped";
  passes: number;
  failures: number;
  lastPassStartedAt: Date | null;
  lastPassFinishedAt: Date | null;
  lastError: string | null;
}

export interface WorkerLoopOptions {
  pass: (signal: AbortSignal) => Promise<PassResult>;
  intervalMs: number;
  onError?: (error: unknown) => void;
}

export class WorkerLoop {
  readonly #options: WorkerLoopOptions;
  readonly #stopController = new AbortController();
  // The sleep between passes listens to this; wake() and stop() abort it. A wake that arrives
  // while a pass runs is remembered, so the next sleep is skipped instead of lost.
  #wakeController = new AbortController();
  #wakeRequested = false;
  #done: Promise<void> | undefined;
  readonly status: LoopStatus = {
    state: "starting",
    passes: 0,
    failures: 0,
    lastPassStartedAt: null,
    lastPassFinishedAt: null,
    lastError: null,
  };

  constructor(options: WorkerLoopOptions) {
    this.#options = options;
  }

  /** Starts the loop once; the returned promise settles when the loop has stopped. */
  start(): Promise<void> {
    this.#done ??= this.#run();
    return this.#done;
  }

  /** Ends the current sleep now (new work is known to be waiting, e.g. a run slot freed). */
  wake(): void {
    this.#wakeRequested = true;
    this.#wakeController.abort();
  }

  /** Graceful: no new pass starts; the running pass sees the signal and may finish its unit of work. */
  stop(): Promise<void> {
    if (this.status.state !== "stopped") this.status.state = "stopping";
    this.#stopController.abort();
    this.#wakeController.abort();
    return this.#done ?? Promise.resolve();
  }

  async #run(): Promise<void> {
    const signal = this.#stopController.signal;
    this.status.state = "running";
    while (!signal.aborted) {
      let busy = false;
      this.status.lastPassStartedAt = new Date();
      try {
        busy = (await this.#options.pass(signal)).busy;
        this.status.lastError = null;
      } catch (error) {
        // A failing pass never kills the loop; handlers are idempotent, so the next pass retries.
        this.status.failures += 1;
        this.status.lastError = messageOf(error);
        this.#options.onError?.(error);
      }
      this.status.passes += 1;
      this.status.lastPassFinishedAt = new Date();
      if (!busy && !this.#wakeRequested && !signal.aborted) {
        this.#wakeController = new AbortController();
        await abortableSleep(this.#options.intervalMs, this.#wakeController.signal);
      }
      this.#wakeRequested = false;
    }
    this.status.state = "stopped";
  }
}
