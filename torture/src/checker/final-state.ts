// What the checker reads besides the history: the final database rows and the host files, as
// plain data (collected by collect.ts after the quiet period; hand-made in the checker's tests).
import type { FinalHosts } from "./hosts";

export type HostEntry = { kind: "file"; sha256: string; token: string | null } | { kind: "symlink"; target: string } | { kind: "directory" };

export interface SlotInfo {
  slot: string;
  issueId: string;
  /** The run's directory in the workspace, e.g. t/ACME-1001. */
  dir: string;
  workspace: string;
  /** A Daytona slot runs the local slots' agent and plan in an emulated Daytona sandbox. */
  kind: "local" | "fake" | "daytona";
}

export interface FinalRun {
  id: string;
  issueId: string;
  status: string;
  errorCode: string | null;
  /** The run's error message as the task shows it (absent in hand-made states that do not need it). */
  errorMessage?: string | null;
  provider: "local" | "fake" | "daytona";
}

export interface FinalCoordinator {
  runId: string;
  phase: string;
  committedAt: string | null;
  failureCode: string | null;
}

export interface FinalFinalizeOp {
  runId: string;
  status: string;
  stage: string | null;
  omitted: boolean;
  /** The host paths this copyback wrote (its `changes.written`, relative to the workspace); absent: not recorded. */
  written?: string[];
}

/** One `lease.acquired` run event: run `runId` was handed lease `leaseId` at `at` (ISO, the database's clock). */
export interface FinalAcquisition {
  runId: string;
  leaseId: string;
  at: string;
  reused: boolean;
  /** This attempt ran no agent (attempts.ts acquisitionsWithoutAgent). */
  noAgentRan?: boolean;
}

export interface FinalAction {
  id: string;
  runId: string | null;
  cause: string;
  status: string;
}

export interface FinalLease {
  id: string;
  runId: string | null;
  status: string;
  provider: string;
  providerLeaseId: string | null;
  /** Local sandboxes: whether the sandbox directory still exists. */
  sandboxExists: boolean | null;
  /** The dispatcher handed this lease to its run (lease.acquired); absent: assumed handed. */
  handedToRun?: boolean;
  /**
   * The run went back to the queue (run.requeued) after it was handed this lease and before any
   * agent.started: no agent ever ran on it (a database outage before the agent's start),
   * so it holds nothing of the task's. Absent: assumed an agent ran.
   */
  agentNeverStarted?: boolean;
  /** The lease carries a destroy intent (leases/lease-metadata.ts sandboxDestroy): a destroy the cleanup sweep finishes. */
  destroyPending?: boolean;
  /** The lease carries a confirmed stop-and-retain receipt (released that way, its files kept: R-SO-2). */
  stoppedAndRetained?: boolean;
  leasePolicy?: string;
  /** listRetainedSandboxes (the Retained sandboxes page, `copyback sandboxes list`) names it at the end. */
  retainedListed?: boolean;
  /** Destroyed by the harness's operator Discard (its destruction receipt's reason names the harness). */
  discardedByOperator?: boolean;
  /**
   * The harness's operator Discard was admitted (its discard intent names the harness's reason) but
   * the lease is not recorded destroyed at the end (`sandboxExists` says whether the destroy ran):
   * its request did not finish it (a PostgreSQL restart between the destroy and the record, a
   * process killed), and the lease cleanup sweep did not either (it must).
   */
  discardUnrecorded?: boolean;
  /** The lease's environment and execution workspace (a reuse is only ever of the same pair). */
  environmentId?: string;
  executionWorkspaceId?: string | null;
}

/** One `lease.released` run event of the dispatcher: run `runId`'s lease released by policy after an outcome. */
export interface FinalRelease {
  runId: string;
  leaseId: string;
  at: string;
  outcome: string;
}

export interface FinalState {
  slots: SlotInfo[];
  runs: FinalRun[];
  acceptedResults: { runId: string }[];
  coordinators: FinalCoordinator[];
  finalizeOps: FinalFinalizeOp[];
  actions: FinalAction[];
  leases: FinalLease[];
  /** Every lease handed to a run, in order (the dispatcher's lease.acquired events); absent: not collected. */
  acquisitions?: FinalAcquisition[];
  /** Every release by policy the dispatcher recorded (lease.released events), in order; absent: not collected. */
  releases?: FinalRelease[];
  /** Local sandbox directories on disk (their provider lease ids) that no lease row names or whose lease is destroyed. */
  strayLocalSandboxes?: string[];
  /** `--provider daytona`: the emulator's sandboxes, not destroyed, that no live lease names (by their lease label). */
  strayDaytonaSandboxes?: string[];
  /** Host files by workspace path, then by relative path. */
  host: Record<string, Record<string, HostEntry>>;
  /** The host files when the torture began (outside t/ they must stay as they are). */
  baseline: Record<string, Record<string, HostEntry>>;
  /** `--hosts 2`: which host each run, claim and lease is bound to (hosts.ts); absent with one host. */
  hosts?: FinalHosts;
}
