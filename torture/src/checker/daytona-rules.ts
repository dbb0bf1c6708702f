// The checker's Daytona rules (`--provider daytona`), read from the emulator's observations in the
// history (daytona-mode/emulator.ts: daytona.act, daytona.state) and the final leases; a history
// without them (every other mode) gives nothing. Pure.
//   - dt_stop_auto_delete_enabled (R-DT-1): a stop call that stopped a started sandbox while its
//     auto-delete interval was enabled (>= 0): copyback must disable it and read it back first.
//   - dt_kept_sandbox_auto_deleted (R-DT-1): Daytona deleted a sandbox on its own (its timer, or
//     the nemesis doing what Daytona would) while the files in it were still needed: the lease's
//     run had not committed by then and an agent ran on it.
//   - dt_stopped_allocation_deleted (R-DT-3): a delete call of a sandbox copyback had stopped with
//     auto-delete disabled (a confirmed stop), still stopped or archived, while its files were
//     still needed (as above) and no verified operator Discard of its lease may have happened.
import type { HistoryEvent } from "../history";
import type { FinalState } from "./final-state";
import type { Violation } from "./verdict";

interface ActLine {
  sandboxId: string;
  leaseId: string | null;
  action: string;
  from: string;
  to?: string;
  autoDeleteInterval: number;
  refused?: number | null;
  at: string;
}

interface StateLine {
  sandboxId: string;
  leaseId: string | null;
  from: string;
  to: string;
  by: "settle" | "timer" | "nemesis";
  autoDeleteInterval: number;
  at: string;
}

const lines = <T>(history: readonly HistoryEvent[], ev: string) => history.filter((e) => e.ev === ev).map((e) => e as unknown as T);

export interface DaytonaContext {
  /** Leases a verified operator Discard may have destroyed (check.ts). */
  discarded: ReadonlySet<string>;
}

export function daytonaViolations(history: readonly HistoryEvent[], final: Pick<FinalState, "leases" | "coordinators">, ctx: DaytonaContext): Violation[] {
  const violations: Violation[] = [];
  const acts = lines<ActLine>(history, "daytona.act");
  const states = lines<StateLine>(history, "daytona.state");
  if (acts.length === 0 && states.length === 0) return violations;
  const leases = new Map(final.leases.map((l) => [l.id, l]));
  const committedAt = new Map(final.coordinators.filter((c) => c.phase === "committed" && c.committedAt).map((c) => [c.runId, c.committedAt!]));
  // The files in a lease's sandbox were still needed at `at`: its run had not committed by then,
  // and an agent ran on it (a sandbox no agent ran on holds nothing of the task's).
  const needed = (leaseId: string | null, at: string): { runId: string | null } | null => {
    const lease = leaseId ? leases.get(leaseId) : undefined;
    if (!lease || lease.agentNeverStarted === true) return null;
    const committed = lease.runId ? committedAt.get(lease.runId) : undefined;
    if (committed !== undefined && committed <= at) return null;
    return { runId: lease.runId };
  };
  const add = (kind: Violation["kind"], detail: string, runId: string | null) => violations.push({ kind, detail, ...(runId ? { runId } : {}) });

  for (const a of acts) {
    if (a.action !== "stop" || a.refused !== undefined || a.from !== "started" || a.autoDeleteInterval < 0) continue;
    add("dt_stop_auto_delete_enabled", `sandbox ${a.sandboxId} (lease ${a.leaseId ?? "none"}) was stopped at ${a.at} with auto-delete enabled (interval ${a.autoDeleteInterval})`, leases.get(a.leaseId ?? "")?.runId ?? null);
  }
  for (const s of states) {
    if (s.to !== "destroyed" || s.by === "settle") continue;
    const still = needed(s.leaseId, s.at);
    if (still) add("dt_kept_sandbox_auto_deleted", `Daytona deleted sandbox ${s.sandboxId} (lease ${s.leaseId}, ${s.from}) on its own (${s.by}) at ${s.at}, before run ${still.runId ?? "?"} committed`, still.runId);
  }
  // Confirmed stops: a sandbox settling stopped with auto-delete disabled, until it is started again.
  const confirmedStopped = new Set<string>();
  // Both kinds are appended by one process in the order they happened: the history's order.
  for (const e of history) {
    if (e.ev === "daytona.state") {
      const s = e as unknown as StateLine;
      if ((s.to === "stopped" || s.to === "archived") && s.autoDeleteInterval < 0 && (s.from === "stopping" || confirmedStopped.has(s.sandboxId))) confirmedStopped.add(s.sandboxId);
      if (s.to === "started" || s.to === "starting" || s.to === "destroyed") confirmedStopped.delete(s.sandboxId);
      continue;
    }
    if (e.ev !== "daytona.act") continue;
    const a = e as unknown as ActLine;
    if (a.action === "start" && a.refused === undefined) confirmedStopped.delete(a.sandboxId);
    if (a.action !== "delete" || a.refused !== undefined || !confirmedStopped.has(a.sandboxId) || !(a.from === "stopped" || a.from === "archived")) continue;
    if (a.leaseId && ctx.discarded.has(a.leaseId)) continue;
    const still = needed(a.leaseId, a.at);
    if (still) add("dt_stopped_allocation_deleted", `sandbox ${a.sandboxId} (lease ${a.leaseId}), stopped with auto-delete disabled, was deleted ${a.from} at ${a.at} before run ${still.runId ?? "?"} committed`, still.runId);
  }
  return violations;
}
