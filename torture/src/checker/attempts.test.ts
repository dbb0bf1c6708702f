import { describe, expect, it } from "vitest";
import { acquisitionKey, leasesNoAgentRanOn, acquisitionsWithoutAgent, type AttemptEvent } from "./attempts";

const R = "run-1";
const at = (s: number) => new Date(Date.UTC(2026, 11, 4, 20, 0, s));
const ev = (code: string, s: number, leaseId?: string): AttemptEvent => ({ runId: R, code, payload: leaseId ? { leaseId } : {}, createdAt: at(s) });

describe("leasesNoAgentRanOn (attempts sent back to the queue before their agent)", () => {
  it("a handed lease whose run was requeued before its agent started held nothing", () => {
    const events = [ev("lease.acquired", 1, "l1"), ev("run.requeued", 2), ev("lease.acquired", 3, "l2"), ev("agent.started", 4)];
    const leases = [
      { id: "l1", runId: R, createdAt: at(1) },
      { id: "l2", runId: R, createdAt: at(3) },
    ];
    expect([...leasesNoAgentRanOn(events, leases, new Set(["l1", "l2"]))]).toEqual(["l1"]);
  });

  it("a lease never handed (its compare-and-set met the outage) is judged from its creation: requeued next, nothing ran", () => {
    const events = [ev("run.requeued", 2), ev("lease.acquired", 3, "l2"), ev("agent.started", 4)];
    const leases = [
      { id: "l1", runId: R, createdAt: at(1) },
      { id: "l2", runId: R, createdAt: at(3) },
    ];
    expect([...leasesNoAgentRanOn(events, leases, new Set(["l2"]))]).toEqual(["l1"]);
  });

  it("a never-handed lease on which an agent did start (its lease.acquired event lost) stays judged", () => {
    const events = [ev("agent.started", 2), ev("run.requeued", 3)];
    const leases = [{ id: "l1", runId: R, createdAt: at(1) }];
    expect(leasesNoAgentRanOn(events, leases, new Set()).size).toBe(0);
  });

  it("a never-handed lease with no later requeue (its controller died) stays judged, and another run's requeue does not count", () => {
    const events: AttemptEvent[] = [{ runId: "run-2", code: "run.requeued", payload: {}, createdAt: at(2) }];
    const leases = [{ id: "l1", runId: R, createdAt: at(1) }];
    expect(leasesNoAgentRanOn(events, leases, new Set()).size).toBe(0);
  });

  it("a requeue before the lease was created says nothing about it", () => {
    const events = [ev("run.requeued", 1)];
    const leases = [{ id: "l1", runId: R, createdAt: at(2) }];
    expect(leasesNoAgentRanOn(events, leases, new Set()).size).toBe(0);
  });
});

describe("leasesNoAgentRanOn with the runs' agent-process records", () => {
  it("a handed lease whose run never logged an agent start nor recorded an agent process held nothing (its setup failed, the orphan sweep settled it)", () => {
    const events = [ev("lease.acquired", 1, "l1")];
    const leases = [{ id: "l1", runId: R, createdAt: at(1) }];
    expect([...leasesNoAgentRanOn(events, leases, new Set(["l1"]), new Set())]).toEqual(["l1"]);
  });

  it("a run that recorded an agent process keeps its lease judged, even when the agent.started event was lost", () => {
    const events = [ev("lease.acquired", 1, "l1")];
    const leases = [{ id: "l1", runId: R, createdAt: at(1) }];
    expect(leasesNoAgentRanOn(events, leases, new Set(["l1"]), new Set([R])).size).toBe(0);
  });

  it("an agent that started on the first lease keeps it judged; a second attempt without an agent is exempt", () => {
    const events = [ev("lease.acquired", 1, "l1"), ev("agent.started", 2), ev("lease.acquired", 3, "l2")];
    const leases = [
      { id: "l1", runId: R, createdAt: at(1) },
      { id: "l2", runId: R, createdAt: at(3) },
    ];
    expect([...leasesNoAgentRanOn(events, leases, new Set(["l1", "l2"]), new Set())]).toEqual(["l2"]);
  });
});

describe("acquisitionsWithoutAgent (the attempts that ran no agent)", () => {
  it("names the acquisition followed by run.requeued, not the one whose agent started", () => {
    const events = [ev("lease.acquired", 1, "l1"), ev("run.requeued", 2), ev("lease.acquired", 3, "l1"), ev("agent.started", 4)];
    expect([...acquisitionsWithoutAgent(events)]).toEqual([acquisitionKey(R, "l1", at(1).toISOString())]);
  });

  it("a last attempt with no agent.started counts only for a run that never recorded an agent process", () => {
    const events = [ev("lease.acquired", 1, "l1"), ev("agent.started", 2), ev("lease.acquired", 3, "l2")];
    expect([...acquisitionsWithoutAgent(events)]).toEqual([acquisitionKey(R, "l2", at(3).toISOString())]);
    expect(acquisitionsWithoutAgent(events, new Set([R])).size).toBe(0);
  });

  it("a requeue after the agent started names nothing (that attempt's files are judged)", () => {
    expect(acquisitionsWithoutAgent([ev("lease.acquired", 1, "l1"), ev("agent.started", 2), ev("run.requeued", 3)]).size).toBe(0);
  });
});
