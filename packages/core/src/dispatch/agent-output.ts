// The agent's stdout and stderr, line by line, into the run's own log (run_events, code
// `agent.output`; the record's shape is records/agent-output.ts), batched and bounded: one runaway agent must not fill the database or drown the
// run page. Lines are written in batches (one INSERT per batch, in order); past the per-run budget
// one `agent.output_truncated` event says so and the rest is dropped (counted, never stored).
// Writing the log never fails the run: a failed batch is logged by the worker and dropped.
import { StringDecoder } from "node:string_decoder";
import type { PrismaClient } from "@copyback/db";
import type { OutputStream } from "../providers/types";
import { agentOutputLineRow, agentOutputTruncatedRow } from "../records/agent-output";
import type { DispatchLog } from "./dispatch-log";

export interface OutputLimits {
  /** At most this many `agent.output` events per run. */
  maxEvents: number;
  /** At most this many bytes of output text per run (UTF-8). */
  maxBytes: number;
  /** A longer line is cut here and marked. */
  maxLineBytes: number;
  /** A batch is written when it has this many lines ... */
  batchLines: number;
  /** ... or when its oldest line has waited this long. */
  batchDelayMs: number;
}

export const DEFAULT_OUTPUT_LIMITS: OutputLimits = {
  maxEvents: 2_000,
  maxBytes: 1024 * 1024,
  maxLineBytes: 8 * 1024,
  batchLines: 100,
  batchDelayMs: 250,
};

export interface OutputSummary {
  lines: number;
  bytes: number;
  truncated: boolean;
  droppedLines: number;
}

interface PendingLine {
  stream: OutputStream;
  text: string;
  seq: number;
}

export class AgentOutputRecorder {
  readonly #db: PrismaClient;
  readonly #run: { companyId: string; runId: string };
  readonly #limits: OutputLimits;
  readonly #log: DispatchLog;
  readonly #partial: Record<OutputStream, string> = { stdout: "", stderr: "" };
  #pending: PendingLine[] = [];
  #timer: NodeJS.Timeout | undefined;
  #writes: Promise<void> = Promise.resolve();
  #lines = 0;
  #bytes = 0;
  #truncated = false;
  #dropped = 0;
  #lastAt = 0;
  /**
   * Output can arrive before the provider reports the process (onStart): lines are held until
   * `started()` has stamped the `agent.started` event, so the log never shows output first.
   */
  #started = false;
  /** The truncation event, written after the lines before it. */
  #truncationPending = false;

  constructor(db: PrismaClient, run: { companyId: string; runId: string }, log: DispatchLog, limits: OutputLimits = DEFAULT_OUTPUT_LIMITS) {
    this.#db = db;
    this.#run = run;
    this.#log = log;
    this.#limits = limits;
  }

  /** A decoded chunk from the provider (chunks may split lines anywhere). */
  write(stream: OutputStream, chunk: string): void {
    const text = this.#partial[stream] + chunk;
    const parts = text.split("\n");
    this.#partial[stream] = parts.pop() ?? "";
    for (const line of parts) this.#accept(stream, line.endsWith("\r") ? line.slice(0, -1) : line);
    // A line without a newline that already exceeds the cut is emitted now, not held forever.
    if (Buffer.byteLength(this.#partial[stream]) > this.#limits.maxLineBytes) {
      this.#accept(stream, this.#partial[stream]);
      this.#partial[stream] = "";
    }
  }

  /**
   * The agent process exists: returns the timestamp for its `agent.started` event, earlier than
   * every output line's, and releases the lines held until now.
   */
  started(): Date {
    const at = this.#stamp();
    this.#started = true;
    this.#flush();
    return at;
  }

  /** Flushes the last partial lines and every pending batch; resolves when all are written. */
  async close(): Promise<OutputSummary> {
    this.#started = true;
    for (const stream of ["stdout", "stderr"] as const) {
      if (this.#partial[stream] !== "") this.#accept(stream, this.#partial[stream]);
      this.#partial[stream] = "";
    }
    this.#flush();
    await this.#writes;
    return { lines: this.#lines, bytes: this.#bytes, truncated: this.#truncated, droppedLines: this.#dropped };
  }

  #accept(stream: OutputStream, raw: string): void {
    if (this.#truncated) {
      this.#dropped += 1;
      return;
    }
    const text = cutToBytes(raw, this.#limits.maxLineBytes);
    const size = Buffer.byteLength(text);
    if (this.#lines >= this.#limits.maxEvents || this.#bytes + size > this.#limits.maxBytes) {
      this.#truncated = true;
      this.#truncationPending = true;
      this.#dropped += 1;
      this.#flush();
      return;
    }
    this.#lines += 1;
    this.#bytes += size;
    this.#pending.push({ stream, text, seq: this.#lines });
    if (this.#pending.length >= this.#limits.batchLines) this.#flush();
    else this.#timer ??= setTimeout(() => this.#flush(), this.#limits.batchDelayMs);
  }

  /**
   * Strictly increasing timestamps keep the start event and the lines in order on the run page
   * (which orders by created_at); a burst drifts by at most maxEvents milliseconds.
   */
  #stamp(): Date {
    this.#lastAt = Math.max(Date.now(), this.#lastAt + 1);
    return new Date(this.#lastAt);
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.#started) return;
    const { batchLines } = this.#limits;
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, batchLines).map((line) => ({ ...line, at: this.#stamp() }));
      this.#chain(() => this.#db.runEvent.createMany({ data: batch.map((line) => agentOutputLineRow(this.#run, line)) }));
    }
    if (this.#truncationPending) {
      this.#truncationPending = false;
      this.#enqueueTruncated(this.#stamp());
    }
  }

  #enqueueTruncated(at: Date): void {
    const { maxEvents, maxBytes } = this.#limits;
    const truncation = { maxEvents, maxBytes, recordedLines: this.#lines, recordedBytes: this.#bytes };
    this.#chain(() => this.#db.runEvent.create({ data: agentOutputTruncatedRow(this.#run, truncation, at) }));
  }

  #chain(write: () => Promise<unknown>): void {
    this.#writes = this.#writes.then(write).then(
      () => undefined,
      (error: unknown) => this.#log.warn({ runId: this.#run.runId, err: error }, "could not record agent output"),
    );
  }
}

/** Cuts a string to at most `maxBytes` of UTF-8 without splitting a character; marks the cut. */
export function cutToBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= maxBytes) return text;
  const marker = " [line cut]";
  const decoder = new StringDecoder("utf8");
  // StringDecoder.write holds back an incomplete trailing character, so the cut never splits one.
  return decoder.write(bytes.subarray(0, Math.max(0, maxBytes - marker.length))) + marker;
}
