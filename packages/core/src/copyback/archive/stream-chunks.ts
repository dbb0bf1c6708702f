// The chunks of a byte stream, one by one, with backpressure. A Readable's own async iterator
// reads in paused mode, where each read() concatenates everything buffered into one new Buffer:
// for a 200 MiB archive that is hundreds of MiB of copying and garbage. In flowing mode every
// chunk is handed over as it was pushed; the stream is paused while the consumer is behind.

const HIGH_WATER_CHUNKS = 8;

interface FlowingStream {
  destroyed?: boolean;
  readableEnded?: boolean;
  errored?: unknown;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  off(event: string, listener: (...args: unknown[]) => void): unknown;
  pause(): unknown;
  resume(): unknown;
}

function isFlowingStream(value: unknown): value is FlowingStream {
  const s = value as Partial<FlowingStream> | null;
  return (
    typeof s?.on === "function" &&
    typeof s.off === "function" &&
    typeof s.pause === "function" &&
    typeof s.resume === "function"
  );
}

export function streamChunks(
  source: AsyncIterable<Uint8Array> | NodeJS.ReadableStream,
): AsyncIterable<Uint8Array> {
  if (!isFlowingStream(source)) return source as AsyncIterable<Uint8Array>;
  const stream = source;
  return {
    [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
      const queue: Uint8Array[] = [];
      let ended = false;
      let failure: { error: unknown } | undefined;
      let wake: (() => void) | undefined;
      const notify = () => {
        const w = wake;
        wake = undefined;
        w?.();
      };
      const onData = (chunk: unknown) => {
        queue.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Uint8Array));
        if (queue.length >= HIGH_WATER_CHUNKS) stream.pause();
        notify();
      };
      const onEnd = () => {
        ended = true;
        notify();
      };
      const onError = (error: unknown) => {
        failure ??= { error };
        notify();
      };
      const detach = () => {
        stream.off("data", onData);
        stream.off("end", onEnd);
        stream.off("error", onError);
        stream.off("close", onEnd);
      };
      stream.on("data", onData);
      stream.on("end", onEnd);
      stream.on("error", onError);
      // Closed without "end" (destroyed): whatever arrived is all there is; the reader of a
      // tar stream then reports the truncation.
      stream.on("close", onEnd);
      // Already over before we listened: those events will not come again.
      if (stream.errored) onError(stream.errored);
      else if (stream.destroyed || stream.readableEnded) onEnd();
      stream.resume();
      return {
        async next(): Promise<IteratorResult<Uint8Array>> {
          for (;;) {
            const chunk = queue.shift();
            if (chunk !== undefined) {
              if (queue.length < HIGH_WATER_CHUNKS / 2) stream.resume();
              return { done: false, value: chunk };
            }
            if (failure) {
              detach();
              throw failure.error;
            }
            if (ended) {
              detach();
              return { done: true, value: undefined };
            }
            await new Promise<void>((resolve) => (wake = resolve));
          }
        },
        async return(): Promise<IteratorResult<Uint8Array>> {
          detach();
          queue.length = 0;
          return { done: true, value: undefined };
        },
      };
    },
  };
}
