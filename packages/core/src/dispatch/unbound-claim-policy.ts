// Issue 23 (host affinity), pure: whether a claim may bind an unbound execution workspace to the
// claiming host. A workspace is host-local, but an unbound one says nothing about which host holds
// its directory (a workspace created under one instance root, say, and never claimed yet). The
// claim binds it here when its host directory exists here; when it does not, another host may hold
// it, so the run is left queued for a host that is live, and bound here only when no other host is
// (a single host: the run then fails with the workspace's missing directory, as before, instead of
// waiting forever). The I/O (the directory check, the worker_hosts read) is in claim-runs.ts.

export interface UnboundClaimInput {
  /** The workspace's host path resolves to an existing directory on this host. */
  directoryHere: boolean;
  /** Some other host has a live worker (worker_hosts, by the database's clock). */
  otherLiveHosts: boolean;
}

/** `bind`: claim the run and bind the workspace to this host; `leave`: the run stays queued, nothing written. */
export type UnboundClaimDecision = "bind" | "leave";

export function decideUnboundClaim(input: UnboundClaimInput): UnboundClaimDecision {
  if (input.directoryHere) return "bind";
  return input.otherLiveHosts ? "leave" : "bind";
}
