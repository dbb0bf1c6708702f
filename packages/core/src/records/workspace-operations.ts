// `workspace_operations` rows: one per prepare/restore/finalize step of a run. A row is opened
// `running` before the physical work and closed `succeeded` or `failed` after it, so a crash in
// between leaves a visible `running` row for the reconciler (never a silent gap).
import { performance } from "node:perf_hooks";
import type { Prisma, WorkspaceOperationPhase } from "@copyback/db/client";
import { observeWorkspaceOperation } from "../metrics/observe";
import type { DbOrTx } from "./run-log";

export interface StartWorkspaceOperation {
  companyId: string;
  runId: string;
  issueId: string;
  phase: WorkspaceOperationPhase;
  metadata?: Prisma.InputJsonObject;
}

export async function startWorkspaceOperation(db: DbOrTx, input: StartWorkspaceOperation): Promise<string> {
  const row = await db.workspaceOperation.create({
    data: {
      companyId: input.companyId,
      runId: input.runId,
      issueId: input.issueId,
      phase: input.phase,
      status: "running",
      metadata: input.metadata ?? {},
    },
    select: { id: true },
  });
  startedHere.set(row.id, { phase: input.phase, at: performance.now() });
  if (startedHere.size > MAX_TRACKED) startedHere.delete(startedHere.keys().next().value as string);
  return row.id;
}

/**
 * Metrics: operations this process opened, so closing one here can report its duration
 * without another query. Bounded: an operation another process closes is forgotten oldest first.
 */
const startedHere = new Map<string, { phase: string; at: number }>();
const MAX_TRACKED = 10_000;

export type FinishWorkspaceOperation =
  | { status: "succeeded"; metadata: Prisma.InputJsonObject }
  | { status: "failed"; errorCode: string; metadata?: Prisma.InputJsonObject };

/** Closes a running operation; a row that is no longer running is left alone (returns false). */
export async function finishWorkspaceOperation(db: DbOrTx, operationId: string, finish: FinishWorkspaceOperation, opts: { claimToken?: string } = {}): Promise<boolean> {
  const updated = await db.workspaceOperation.updateMany({
    // R-FO-4: a claimed preparation is finished only while it still carries its holder's claim.
    where: { id: operationId, status: "running", ...(opts.claimToken ? { metadata: { path: ["recoveryClaim", "token"], equals: opts.claimToken } } : {}) },
    data: {
      status: finish.status,
      errorCode: finish.status === "failed" ? finish.errorCode : null,
      ...(finish.metadata !== undefined ? { metadata: finish.metadata } : {}),
      finishedAt: new Date(),
    },
  });
  const started = startedHere.get(operationId);
  if (started && updated.count === 1) {
    startedHere.delete(operationId);
    observeWorkspaceOperation(started.phase, finish.status, (performance.now() - started.at) / 1000);
  }
  return updated.count === 1;
}

/**
 * A stable, path-free code for an error (R-UA-4: host paths never reach stored rows). Domain and
 * engine errors carry a string `code`; anything else gets the caller's fallback.
 */
export function errorCodeOf(error: unknown, fallback: string): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Za-z0-9_.-]{1,80}$/.test(code) ? code : fallback;
}

/**
 * Closes the `running` finalize operations an earlier owner of the run left behind when it died
 * (its copyback stopped without settling them). Called by the next owner, under ownership, so a
 * recovered run never keeps a running operation (R-ATT-5).
 */
export async function closeInterruptedFinalizeOperations(db: DbOrTx, key: { companyId: string; runId: string; issueId: string }): Promise<number> {
  const closed = await db.workspaceOperation.updateMany({
    where: { companyId: key.companyId, runId: key.runId, issueId: key.issueId, phase: "workspace_finalize", status: "running" },
    data: { status: "failed", errorCode: "finalization_interrupted", finishedAt: new Date() },
  });
  return closed.count;
}
