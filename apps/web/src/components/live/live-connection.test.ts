import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LiveChange } from "~/server/live/wire";
import {
  connectLiveEvents,
  defaultReopenDelayMs,
  type EventSourceLike,
  type LiveConnectionStatus,
} from "./live-connection";

class FakeEventSource implements EventSourceLike {
  static all: FakeEventSource[] = [];
  readyState = 0;
  closed = false;
  private readonly listeners = new Map<string, Array<(event: MessageEvent<string>) => void>>();
  constructor(readonly url: string) {
    FakeEventSource.all.push(this);
  }
  addEventListener(type: string, listener: (event: MessageEvent<string>) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  emit(type: string, data = "") {
    if (type !== "error") this.readyState = 1;
    for (const listener of this.listeners.get(type) ?? [])
      listener({ data } as MessageEvent<string>);
  }
  fail(permanently: boolean) {
    this.readyState = permanently ? 2 : 0;
    this.emit("error");
  }
}

function connect() {
  const changes: LiveChange[] = [];
  const statuses: LiveConnectionStatus[] = [];
  let resyncs = 0;
  const connection = connectLiveEvents(
    "/api/events?companyId=c",
    {
      onChange: (c) => changes.push(c),
      onResync: () => resyncs++,
      onStatus: (s) => statuses.push(s),
    },
    { createEventSource: (url) => new FakeEventSource(url), reopenDelayMs: () => 1_000 },
  );
  return {
    connection,
    changes,
    statuses,
    resyncs: () => resyncs,
    source: () => FakeEventSource.all.at(-1)!,
  };
}

describe("connectLiveEvents", () => {
  beforeEach(() => {
    FakeEventSource.all = [];
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("goes live on ready and hands over parsed changes", () => {
    const c = connect();
    c.source().emit("ready", '{"listening":true}');
    c.source().emit(
      "change",
      '{"entity":"issues","id":"i","issueId":"i","runId":null,"op":"UPDATE"}',
    );
    c.source().emit("change", "not json");
    expect(c.statuses).toEqual(["connecting", "live"]);
    expect(c.changes).toEqual([
      { entity: "issues", id: "i", issueId: "i", runId: null, op: "UPDATE" },
    ]);
    expect(c.resyncs()).toBe(0);
  });

  it("resyncs after EventSource reconnected by itself", () => {
    const c = connect();
    c.source().emit("ready", '{"listening":true}');
    c.source().fail(false);
    expect(c.statuses.at(-1)).toBe("reconnecting");
    c.source().emit("ready", '{"listening":true}');
    expect(c.resyncs()).toBe(1);
    expect(c.statuses.at(-1)).toBe("live");
    expect(FakeEventSource.all).toHaveLength(1);
  });

  it("reopens with backoff when EventSource gave up (HTTP error), then resyncs", () => {
    const c = connect();
    c.source().emit("ready", '{"listening":true}');
    const first = c.source();
    first.fail(true);
    expect(first.closed).toBe(true);
    vi.advanceTimersByTime(999);
    expect(FakeEventSource.all).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(FakeEventSource.all).toHaveLength(2);
    c.source().emit("ready", '{"listening":true}');
    expect(c.resyncs()).toBe(1);
  });

  it("shows delayed while the server's own LISTEN connection is down, and follows its resync", () => {
    const c = connect();
    c.source().emit("ready", '{"listening":false}');
    expect(c.statuses.at(-1)).toBe("delayed");
    c.source().emit("status", '{"listening":true}');
    c.source().emit("resync", "{}");
    expect(c.statuses.at(-1)).toBe("live");
    expect(c.resyncs()).toBe(1);
  });

  it("stops for good when access is denied, and on close", () => {
    const c = connect();
    c.source().emit("ready", '{"listening":true}');
    c.source().emit("denied", '{"message":"no"}');
    expect(c.source().closed).toBe(true);
    expect(c.statuses.at(-1)).toBe("stopped");
    vi.advanceTimersByTime(120_000);
    expect(FakeEventSource.all).toHaveLength(1);

    const d = connect();
    d.source().fail(true);
    d.connection.close();
    vi.advanceTimersByTime(120_000);
    expect(FakeEventSource.all).toHaveLength(2);
    expect(d.statuses).toEqual(["connecting", "stopped"]);
  });

  it("re-reads on the first ready when it replaces an earlier connection", () => {
    let resyncs = 0;
    connectLiveEvents(
      "/api/events?companyId=c",
      { onChange: () => undefined, onResync: () => resyncs++, onStatus: () => undefined },
      { createEventSource: (url) => new FakeEventSource(url), resyncOnFirstReady: true },
    );
    FakeEventSource.all.at(-1)!.emit("ready", '{"listening":true}');
    expect(resyncs).toBe(1);
  });

  it("backs off up to a minute", () => {
    expect(defaultReopenDelayMs(0, () => 1)).toBe(1_000);
    expect(defaultReopenDelayMs(3, () => 1)).toBe(8_000);
    expect(defaultReopenDelayMs(40, () => 1)).toBe(60_000);
    expect(defaultReopenDelayMs(40, () => 0)).toBe(30_000);
  });
});
