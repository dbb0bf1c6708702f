// The reconciler's unit of work (DESIGN.md section 8): a sweep selects only due units through an
// index, in bounded batches, and handles each one idempotently. Several workers may run the same
// sweeps at once; a unit someone else holds is skipped without a write (R-OWN-2).
/** A unit handled with nothing to do: not counted in a pass's outcomes. */
export const IDLE_OUTCOME = "idle";

export interface Sweep<U = unknown> {
  readonly name: string;
  /**
   * The sweep's one unit is the whole pass (a set-based statement): a full batch of it never means
   * that more is due, so it never makes the reconciler pass again without sleeping.
   */
  readonly wholePassUnit?: true;
  /** At most `limit` due units, fairly across companies. */
  due(limit: number): Promise<U[]>;
  /** Handles one unit; returns a short outcome word for the pass's counts and logs. */
  handle(unit: U): Promise<string>;
  /** A stable id for logs. */
  idOf(unit: U): string;
}

export interface SweepLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
