import { PassThrough, Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { runWithCopybackRetries } from "../../src/copyback/merge/retries";
import {
  DEFAULT_EXPORT_TIMEOUT_MS,
  EXPORT_TIMEOUT_CODE,
  exportTimeoutError,
  exportTimeoutOf,
  untilAborted,
  withExportDeadline,
} from "../../src/finalization/export-deadline";
import { decideCopybackFailure } from "../../src/finalization/finalize-policy";

const never = <T>() => new Promise<T>(() => undefined);
const sink = () => new Writable({ write: (_chunk, _encoding, done) => done() });

describe("export deadline", () => {
  it("defaults to 10 minutes and refuses a timeout that is not a whole positive number of milliseconds", () => {
    expect(exportTimeoutOf(undefined)).toBe(DEFAULT_EXPORT_TIMEOUT_MS);
    expect(DEFAULT_EXPORT_TIMEOUT_MS).toBe(600_000);
    expect(exportTimeoutOf(1)).toBe(1);
    for (const bad of [0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31]) {
      expect(() => exportTimeoutOf(bad), String(bad)).toThrow(expect.objectContaining({ code: "export_timeout_invalid" }));
    }
  });

  it("R-RR-1 the timeout is a transient provider failure before host writes: retried in process, then retryable", async () => {
    const error = exportTimeoutError(50);
    expect(error).toMatchObject({ code: EXPORT_TIMEOUT_CODE, kind: "unavailable" });
    expect(decideCopybackFailure(error, { failuresBefore: 0, now: new Date(0) })).toMatchObject({ kind: "retryable", code: EXPORT_TIMEOUT_CODE });
    let tries = 0;
    await expect(
      runWithCopybackRetries(async () => {
        tries += 1;
        throw exportTimeoutError(50);
      }, { backoffMs: 0 }),
    ).rejects.toMatchObject({ code: EXPORT_TIMEOUT_CODE });
    expect(tries).toBe(3);
  });

  it("aborts work that honours the signal and reports the timeout, whatever the work threw on abort", async () => {
    let seen: AbortSignal | undefined;
    await expect(
      withExportDeadline(5, (signal) => {
        seen = signal;
        return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("aborted by me"))));
      }),
    ).rejects.toMatchObject({ code: EXPORT_TIMEOUT_CODE });
    expect(seen?.aborted).toBe(true);
  });

  it("aborts the consumption of a stream that stops mid-transfer and destroys it", async () => {
    const stalled = new PassThrough();
    stalled.write(Buffer.alloc(512));
    await expect(withExportDeadline(5, (signal) => pipeline(stalled, sink(), { signal }))).rejects.toMatchObject({ code: EXPORT_TIMEOUT_CODE });
    expect(stalled.destroyed).toBe(true);
  });

  it("work that finishes in time keeps its value or its own error", async () => {
    expect(await withExportDeadline(60_000, async () => "exported")).toBe("exported");
    const own = new Error("provider said no");
    await expect(withExportDeadline(60_000, async () => Promise.reject(own))).rejects.toBe(own);
  });

  it("a provider call that ignores the signal still settles at the abort; its late stream is destroyed", async () => {
    let deliver: (stream: Readable) => void = () => undefined;
    const late = new Promise<Readable>((resolve) => (deliver = resolve));
    const discarded: Readable[] = [];
    await expect(
      withExportDeadline(5, (signal) => untilAborted(late, signal, (stream) => (discarded.push(stream), stream.destroy()))),
    ).rejects.toMatchObject({ code: EXPORT_TIMEOUT_CODE });
    const stream = Readable.from(["x"]);
    deliver(stream);
    await late;
    await new Promise((resolve) => setImmediate(resolve));
    expect(discarded).toEqual([stream]);
    expect(stream.destroyed).toBe(true);
  });

  it("untilAborted passes a call's value or error through while the signal stands", async () => {
    const signal = new AbortController().signal;
    expect(await untilAborted(Promise.resolve(7), signal, () => undefined)).toBe(7);
    await expect(untilAborted(Promise.reject(new Error("no")), signal, () => undefined)).rejects.toThrow("no");
    expect(await untilAborted(Promise.resolve(8), undefined, () => undefined)).toBe(8);
    const aborted = AbortSignal.abort(new Error("already"));
    await expect(untilAborted(never<number>(), aborted, () => undefined)).rejects.toThrow("already");
  });
});
