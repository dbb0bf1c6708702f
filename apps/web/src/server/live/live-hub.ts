// In-memory fan-out of the process's one LISTEN connection to its subscribers. Each subscriber
// is registered under exactly one company, checked by the caller (`liveAccessError`) before it
// subscribes; the hub's job is that no subscriber ever hears another company's changes.
import type { LiveEvent } from "@copyback/db/notify";
import type { LiveChange, LiveServerStatus } from "./wire";

export type LiveMessage =
  | { kind: "change"; change: LiveChange }
  | { kind: "resync" }
  | { kind: "status"; status: LiveServerStatus };

export type LiveSink = (message: LiveMessage) => void;

export class LiveHub {
  private readonly byCompany = new Map<string, Set<LiveSink>>();

  constructor(private readonly onSinkError: (error: unknown) => void = () => undefined) {}

  /** Registers `sink` for `companyId`'s changes; returns its unsubscribe function (idempotent). */
  subscribe(companyId: string, sink: LiveSink): () => void {
    let sinks = this.byCompany.get(companyId);
    if (!sinks) {
      sinks = new Set();
      this.byCompany.set(companyId, sinks);
    }
    // Each subscription gets its own wrapper, so one sink function may subscribe twice.
    const entry: LiveSink = (message) => sink(message);
    sinks.add(entry);
    return () => {
      const current = this.byCompany.get(companyId);
      if (!current?.delete(entry)) return;
      if (current.size === 0) this.byCompany.delete(companyId);
    };
  }

  /** Delivers a database event to the subscribers of its company only. Returns how many got it. */
  publish(event: LiveEvent): number {
    const sinks = this.byCompany.get(event.companyId);
    if (!sinks) return 0;
    const change: LiveChange = {
      entity: event.entity,
      id: event.id,
      issueId: event.issueId,
      runId: event.runId,
      op: event.op,
    };
    return this.send(sinks, { kind: "change", change });
  }

  /** Tells every subscriber of every company (an outage is not company data). */
  broadcast(message: Exclude<LiveMessage, { kind: "change" }>): number {
    let delivered = 0;
    for (const sinks of this.byCompany.values()) delivered += this.send(sinks, message);
    return delivered;
  }

  subscriberCount(companyId?: string): number {
    if (companyId !== undefined) return this.byCompany.get(companyId)?.size ?? 0;
    let total = 0;
    for (const sinks of this.byCompany.values()) total += sinks.size;
    return total;
  }

  private send(sinks: ReadonlySet<LiveSink>, message: LiveMessage): number {
    let delivered = 0;
    // A copy: a sink may unsubscribe (itself or others) while we iterate.
    for (const sink of [...sinks]) {
      try {
        sink(message);
        delivered++;
      } catch (error) {
        this.onSinkError(error);
      }
    }
    return delivered;
  }
}
