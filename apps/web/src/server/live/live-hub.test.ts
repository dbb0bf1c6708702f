import { describe, expect, it } from "vitest";
import type { LiveEvent } from "@copyback/db/notify";
import { LiveHub, type LiveMessage } from "./live-hub";

const ACME = "0a0e0000-0000-4000-8000-00000000ac01";
const GLOBEX = "0a0e0000-0000-4000-8000-00000000ac02";
const event = (companyId: string): LiveEvent => ({
  companyId,
  entity: "issues",
  id: "6f1c2b1e-3b0e-4a8e-9d55-1f0f5bd1e001",
  issueId: "6f1c2b1e-3b0e-4a8e-9d55-1f0f5bd1e001",
  runId: null,
  op: "UPDATE",
});

describe("LiveHub", () => {
  it("delivers a company's change to that company's subscribers only, without the company id", () => {
    const hub = new LiveHub();
    const acme: LiveMessage[] = [];
    const globex: LiveMessage[] = [];
    hub.subscribe(ACME, (m) => acme.push(m));
    hub.subscribe(GLOBEX, (m) => globex.push(m));
    expect(hub.publish(event(ACME))).toBe(1);
    expect(acme).toEqual([
      {
        kind: "change",
        change: {
          entity: "issues",
          id: event(ACME).id,
          issueId: event(ACME).id,
          runId: null,
          op: "UPDATE",
        },
      },
    ]);
    expect(globex).toEqual([]);
    expect(JSON.stringify(acme)).not.toContain(ACME);
  });

  it("unsubscribes exactly one subscription, idempotently, and forgets empty companies", () => {
    const hub = new LiveHub();
    const got: LiveMessage[] = [];
    const sink = (m: LiveMessage) => got.push(m);
    const first = hub.subscribe(ACME, sink);
    const second = hub.subscribe(ACME, sink);
    expect(hub.subscriberCount(ACME)).toBe(2);
    first();
    first();
    expect(hub.subscriberCount(ACME)).toBe(1);
    hub.publish(event(ACME));
    expect(got).toHaveLength(1);
    second();
    expect(hub.subscriberCount()).toBe(0);
    expect(hub.publish(event(ACME))).toBe(0);
  });

  it("broadcasts resync and status to every company", () => {
    const hub = new LiveHub();
    const got: string[] = [];
    hub.subscribe(ACME, (m) => got.push(`acme:${m.kind}`));
    hub.subscribe(GLOBEX, (m) => got.push(`globex:${m.kind}`));
    expect(hub.broadcast({ kind: "resync" })).toBe(2);
    expect(got.sort()).toEqual(["acme:resync", "globex:resync"]);
  });

  it("keeps delivering to the others when one subscriber throws", () => {
    const errors: unknown[] = [];
    const hub = new LiveHub((error) => errors.push(error));
    const got: LiveMessage[] = [];
    hub.subscribe(ACME, () => {
      throw new Error("broken sink");
    });
    hub.subscribe(ACME, (m) => got.push(m));
    expect(hub.publish(event(ACME))).toBe(1);
    expect(got).toHaveLength(1);
    expect(errors).toHaveLength(1);
  });
});
