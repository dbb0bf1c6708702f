import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LiveSink } from "./live-hub";
import { openEventStream, type EventStreamCloseReason } from "./event-stream";

const decoder = new TextDecoder();

function harness(
  overrides: { stillAuthorized?: () => Promise<boolean>; maxQueuedChunks?: number } = {},
) {
  const sinks = new Set<LiveSink>();
  const controller = new AbortController();
  const closes: EventStreamCloseReason[] = [];
  const stream = openEventStream({
    subscribe: (sink) => {
      sinks.add(sink);
      return () => sinks.delete(sink);
    },
    signal: controller.signal,
    initialStatus: { listening: true },
    heartbeatMs: 15_000,
    reauthorizeMs: 60_000,
    onClose: (reason) => closes.push(reason),
    ...overrides,
  });
  const reader = stream.getReader();
  const read = async () => {
    const chunk = await reader.read();
    return chunk.done ? null : decoder.decode(chunk.value);
  };
  return { sinks, controller, closes, reader, read, stream };
}

describe("openEventStream", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("starts with retry and ready, then writes each hub message as an event", async () => {
    const h = harness();
    expect(await h.read()).toBe("retry: 3000\n\n");
    expect(await h.read()).toBe('event: ready\ndata: {"listening":true}\n\n');
    for (const sink of h.sinks)
      sink({
        kind: "change",
        change: { entity: "issues", id: "i", issueId: "i", runId: null, op: "UPDATE" },
      });
    expect(await h.read()).toBe(
      'event: change\ndata: {"entity":"issues","id":"i","issueId":"i","runId":null,"op":"UPDATE"}\n\n',
    );
    for (const sink of h.sinks) sink({ kind: "resync" });
    expect(await h.read()).toBe("event: resync\ndata: {}\n\n");
  });

  it("sends a heartbeat comment every 15 s", async () => {
    const h = harness();
    await h.read();
    await h.read();
    vi.advanceTimersByTime(15_000);
    expect(await h.read()).toBe(": keep-alive\n\n");
  });

  it("unsubscribes and stops its timers when the client disconnects", async () => {
    const h = harness();
    expect(h.sinks.size).toBe(1);
    h.controller.abort();
    expect(h.sinks.size).toBe(0);
    expect(h.closes).toEqual(["client_gone"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("cleans up when the reader cancels the stream, once", async () => {
    const h = harness();
    await h.reader.cancel();
    h.controller.abort();
    expect(h.sinks.size).toBe(0);
    expect(h.closes).toEqual(["client_gone"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("ends the stream with a denied event when access is withdrawn", async () => {
    let allowed = true;
    const h = harness({ stillAuthorized: () => Promise.resolve(allowed) });
    await h.read();
    await h.read();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(h.sinks.size).toBe(1);
    allowed = false;
    await vi.advanceTimersByTimeAsync(60_000);
    const rest: string[] = [];
    for (let chunk = await h.read(); chunk !== null; chunk = await h.read()) rest.push(chunk);
    expect(rest.filter((c) => !c.startsWith(":"))).toEqual([
      'event: denied\ndata: {"message":"You no longer have access to this company."}\n\n',
    ]);
    expect(h.sinks.size).toBe(0);
    expect(h.closes).toEqual(["denied"]);
  });

  it("treats a failing access check as no answer, not a denial", async () => {
    const h = harness({ stillAuthorized: () => Promise.reject(new Error("database unreachable")) });
    await vi.advanceTimersByTimeAsync(120_000);
    expect(h.sinks.size).toBe(1);
    expect(h.closes).toEqual([]);
    h.controller.abort();
  });

  it("disconnects a client that stops reading instead of queueing without bound", async () => {
    const h = harness({ maxQueuedChunks: 5 });
    for (let i = 0; i < 20; i++) for (const sink of h.sinks) sink({ kind: "resync" });
    expect(h.closes).toEqual(["too_slow"]);
    expect(h.sinks.size).toBe(0);
  });

  it("does nothing for a request that is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    let subscribed = false;
    const stream = openEventStream({
      subscribe: () => {
        subscribed = true;
        return () => undefined;
      },
      signal: controller.signal,
      initialStatus: { listening: true },
    });
    expect(subscribed).toBe(false);
    expect((await stream.getReader().read()).done).toBe(true);
  });
});
