// Which leases no agent ever ran on, read from the run events the dispatcher writes (a
// run whose setup met a database outage goes back to the queue before its agent starts, and that
// attempt's lease is destroyed by policy; it held nothing of the task's, so the held-sandbox and
// R-FO-1 rules of check.ts do not judge it). Pure: collect.ts reads the rows.

export interface AttemptEvent {
  runId: string;
  code: "lease.acquired" | "agent.started" | "run.requeued" | string;
  payload: unknown;
  createdAt: Date;
}

export interface AttemptLease {
  id: string;
  runId: string | null;
  createdAt: Date;
}

/**
 * `events` in each run's own order (created, then id). A lease handed to its run (its
 * lease.acquired event) is judged from that event: the attempt ended before its agent when the
 * run's next agent.started / run.requeued is the requeue. A lease never handed (the allocation's
 * compare-and-set, or the event after it, met the outage) is judged from its own creation the same
 * way; an agent that did start on it (the lease.acquired event lost) shows as agent.started first
 * and stays judged.
 */
export function leasesNoAgentRanOn(events: readonly AttemptEvent[], leases: readonly AttemptLease[], handed: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  const current = new Map<string, string | null>();
  for (const e of events) {
    const leaseId = leaseIdOf(e.payload);
    if (e.code === "lease.acquired") current.set(e.runId, leaseId);
    else if (e.code === "agent.started") current.set(e.runId, null);
    else if (e.code === "run.requeued") {
      const lease = current.get(e.runId);
      if (lease) out.add(lease);
      current.set(e.runId, null);
    }
  }
  for (const lease of leases) {
    if (!lease.runId || handed.has(lease.id)) continue;
    const next = events.find((e) => e.runId === lease.runId && (e.code === "agent.started" || e.code === "run.requeued") && e.createdAt >= lease.createdAt);
    if (next?.code === "run.requeued") out.add(lease.id);
  }
  return out;
}

function leaseIdOf(payload: unknown): string | null {
  if (typeof payload !== "object" || payload === null) return null;
  const id = (payload as Record<string, unknown>).leaseId;
  return typeof id === "string" ? id : null;
}
