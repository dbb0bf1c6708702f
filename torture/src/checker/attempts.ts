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
 * and stays judged. `agentRecorded`: the runs whose runner profile records an agent process
 * (records/agent-process.ts); a lease of a run without one, followed by no agent.started, held no
 * agent's work either.
 */
export function leasesNoAgentRanOn(
  events: readonly AttemptEvent[],
  leases: readonly AttemptLease[],
  handed: ReadonlySet<string>,
  agentRecorded: ReadonlySet<string> = new Set(),
): Set<string> {
  // The handed leases: those of the attempts that ran no agent (one walk of the events, below).
  const out = new Set(attemptsWithoutAgent(events, agentRecorded).map((attempt) => attempt.leaseId));
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

/** The key of one acquisition (a run handed a lease at one moment) in requeuedAcquisitions' set. */
export const acquisitionKey = (runId: string, leaseId: string, at: string): string => `${runId} ${leaseId} ${at}`;

/**
 * The acquisitions whose attempt ran no agent, by the same rules as leasesNoAgentRanOn but per
 * attempt (a reused lease has several): the run's next event of its attempts is run.requeued, or
 * (for a run that never recorded an agent process) its next lease.acquired or nothing at all,
 * with no agent.started before it. Such an attempt put nothing of its run's work in the sandbox,
 * so a later reuse of the lease takes none of the run's files, whatever the run ended as (seed
 * 20261207: a requeue after a terminated connection, the retry's ENOSPC on another lease; seed
 * 20261208: a preparation whose failure could not be written, the run later failed
 * process_lost by the orphan sweep).
 */
export function acquisitionsWithoutAgent(events: readonly AttemptEvent[], agentRecorded: ReadonlySet<string> = new Set()): Set<string> {
  return new Set(attemptsWithoutAgent(events, agentRecorded).map((a) => acquisitionKey(a.runId, a.leaseId, a.at)));
}

interface Attempt {
  runId: string;
  leaseId: string;
  at: string;
}

/**
 * The one walk behind both views: each run's attempts in its own event order, and those that ran
 * no agent. The run's previous attempt ended without its agent (no agent.started) when its next
 * acquisition comes on a run that never recorded an agent process, or when it was requeued; the
 * last attempt of a run that never recorded an agent process and never logged its start (its
 * setup failed, the failure settled by the orphan sweep: R-FO-1's scope, "its agent never
 * started") too. Both signals must be missing: the product judges by the first.
 */
function attemptsWithoutAgent(events: readonly AttemptEvent[], agentRecorded: ReadonlySet<string>): Attempt[] {
  const out: Attempt[] = [];
  const open = new Map<string, Attempt | null>();
  for (const e of events) {
    if (e.code === "lease.acquired") {
      const previous = open.get(e.runId);
      if (previous && !agentRecorded.has(e.runId)) out.push(previous);
      const leaseId = leaseIdOf(e.payload);
      open.set(e.runId, leaseId ? { runId: e.runId, leaseId, at: e.createdAt.toISOString() } : null);
    } else if (e.code === "agent.started") open.set(e.runId, null);
    else if (e.code === "run.requeued") {
      const attempt = open.get(e.runId);
      if (attempt) out.push(attempt);
      open.set(e.runId, null);
    }
  }
  for (const [runId, attempt] of open) if (attempt && !agentRecorded.has(runId)) out.push(attempt);
  return out;
}
