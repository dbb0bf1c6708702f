// What each worker is doing at a moment (the suite exists to judge copybacks under
// faults, so the nemesis must know whether a worker kill lands on a copyback or finalization, or only
// on agents mid-turn). Classified from the runs a worker controls and the copyback receipts it holds
// (read by read-worker-activity.ts); pure.

/** One running run as the database shows it, relative to the workers' PIDs. */
export interface ActivityRow {
  runId: string;
  controllerPid: number | null;
  /** The coordinator's phase (null: no coordinator yet). */
  phase: string | null;
  /** The pid of the durable copyback receipt (`nativeWorkspaceFinalizationOwner`), null without one. */
  ownerPid: number | null;
}

/** What a kill of this worker would hit. */
export interface WorkerActivity {
  /** Runs whose physical copyback this worker owns (its receipt is on the run). */
  copying: string[];
  /** Runs it controls past their accepted result, not copying: admitted or arbitrating. */
  finalizing: string[];
  /** Runs it controls whose copyback waits for the reconciler's retry (retryable_failure): nothing of theirs runs here. */
  retryWait: string[];
  /** Runs it controls before any accepted result: the agent's turn (acquisition, seeding, the agent). */
  turn: string[];
}

/** Past the accepted result and being worked on: the copyback's admission, the copy, its arbitration. */
const FINALIZATION_PHASES = new Set(["result_accepted", "workspace_finalizing", "arbitrating"]);

export function emptyActivity(): WorkerActivity {
  return { copying: [], finalizing: [], retryWait: [], turn: [] };
}

/** Per worker PID: what its runs are doing. A receipt counts for the PID that wrote it, whoever controls the run. */
export function classifyActivity(rows: readonly ActivityRow[], pids: readonly number[]): Map<number, WorkerActivity> {
  const out = new Map<number, WorkerActivity>(pids.map((p) => [p, emptyActivity()]));
  for (const row of rows) {
    const owner = row.ownerPid !== null ? out.get(row.ownerPid) : undefined;
    if (owner) owner.copying.push(row.runId);
    const controller = row.controllerPid !== null ? out.get(row.controllerPid) : undefined;
    if (!controller || row.ownerPid === row.controllerPid) continue;
    if (row.phase !== null && FINALIZATION_PHASES.has(row.phase)) controller.finalizing.push(row.runId);
    else if (row.phase === "retryable_failure") controller.retryWait.push(row.runId);
    else controller.turn.push(row.runId);
  }
  return out;
}

export type Hit = "copy" | "finalization" | "turn" | "retry_wait" | "idle";

/** What a kill with this activity hits: a copyback or finalization first (what the checker judges), else an agent's turn, else a run only waiting for its retry, else nothing. */
export function hitOf(activity: WorkerActivity): Hit {
  if (activity.copying.length > 0) return "copy";
  if (activity.finalizing.length > 0) return "finalization";
  if (activity.turn.length > 0) return "turn";
  if (activity.retryWait.length > 0) return "retry_wait";
  return "idle";
}
