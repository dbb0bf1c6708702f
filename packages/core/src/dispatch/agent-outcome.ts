// What happens after the agent's process has exited (pure). An accepted result is the truth
// whatever the exit status: an agent that called finish and then hung until its timeout still
// finished its turn. Without one, the exit explains the failure with a stable code.
export interface AgentExit {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  /** The resource limit the agent hit (cpu, memory, processes, file_size), when it hit one. */
  resourceLimit?: string | null;
}

export interface AfterAgentSnapshot {
  /** heartbeat_runs.status, re-read after the exit and the result-file publication. */
  runStatus: string;
  acceptedResultId: string | null;
  exit: AgentExit;
  /** Why a result file did not produce an accepted result, for the failure message. */
  resultFileNote: string | null;
}

export type AfterAgentDecision =
  | { kind: "finalize"; resultId: string }
  | { kind: "fail"; code: AgentFailureCode; message: string }
  /** Someone else settled the run meanwhile (cancelled, failed): only the lease is left to release. */
  | { kind: "not_running"; status: string };

export type AgentFailureCode = "agent_cancelled" | "agent_timed_out" | "agent_resource_limit" | "agent_exit_nonzero" | "agent_exited_without_result";

const LIMIT_NAMES: Readonly<Record<string, string>> = { cpu: "CPU time", memory: "memory", processes: "process count", file_size: "file size" };

export function decideAfterAgent(snapshot: AfterAgentSnapshot): AfterAgentDecision {
  if (snapshot.runStatus !== "running") return { kind: "not_running", status: snapshot.runStatus };
  if (snapshot.acceptedResultId) return { kind: "finalize", resultId: snapshot.acceptedResultId };
  const { exit } = snapshot;
  const note = snapshot.resultFileNote ? ` ${snapshot.resultFileNote}` : "";
  if (exit.cancelled) return { kind: "fail", code: "agent_cancelled", message: `The agent was stopped before it submitted a result.${note}` };
  if (exit.timedOut) return { kind: "fail", code: "agent_timed_out", message: `The agent ran past its time limit without submitting a result.${note}` };
  if (exit.resourceLimit) {
    const name = LIMIT_NAMES[exit.resourceLimit] ?? exit.resourceLimit;
    return {
      kind: "fail",
      code: "agent_resource_limit",
      message: `The agent hit its ${name} limit (the environment's limits.${exit.resourceLimit === "cpu" ? "cpuSeconds" : exit.resourceLimit === "memory" ? "memoryMb" : exit.resourceLimit === "processes" ? "processes" : "fileSizeMb"}) and was stopped without submitting a result; its sandbox is kept.${note}`,
    };
  }
  if (exit.exitCode !== 0) {
    const how = exit.exitCode === null ? `was killed by ${exit.signal ?? "a signal"}` : `exited with code ${exit.exitCode}`;
    return { kind: "fail", code: "agent_exit_nonzero", message: `The agent ${how} without submitting a result.${note}` };
  }
  return { kind: "fail", code: "agent_exited_without_result", message: `The agent exited without submitting a result.${note}` };
}

export type AfterExecFailureDecision =
  | { kind: "finalize"; resultId: string }
  /** Nothing to finalize: the run fails with the provider's error. */
  | { kind: "fail" }
  | { kind: "not_running"; status: string };

/**
 * The provider's exec failed or its reply was lost (the agent may well have run). An accepted
 * result (the finish API during the turn) is the truth here too: the run finalizes it, its files
 * are exported from the same sandbox. Without one the run fails with the provider's error.
 */
export function decideAfterExecFailure(snapshot: Pick<AfterAgentSnapshot, "runStatus" | "acceptedResultId">): AfterExecFailureDecision {
  if (snapshot.runStatus !== "running") return { kind: "not_running", status: snapshot.runStatus };
  if (snapshot.acceptedResultId) return { kind: "finalize", resultId: snapshot.acceptedResultId };
  return { kind: "fail" };
}
