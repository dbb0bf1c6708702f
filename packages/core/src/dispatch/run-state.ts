// The executor's reads of where its run stands after the agent's turn: the run's status and its
// first accepted result (an accepted result keeps its own export path, R-FO-6).
import type { PrismaClient } from "@copyback/db";

export interface RunState {
  runStatus: string;
  acceptedResultId: string | null;
}

export async function readRunState(db: PrismaClient, runId: string): Promise<RunState> {
  // Two independent reads side by side (one round trip of waiting before finalization, not two).
  const [run, acceptedResultId] = await Promise.all([db.heartbeatRun.findUnique({ where: { id: runId }, select: { status: true } }), acceptedResultIdOf(db, runId)]);
  return { runStatus: run?.status ?? "missing", acceptedResultId };
}

/** Whether the run has an accepted result (the last line of defence's question, R-FO-6). */
export async function hasAcceptedResult(db: PrismaClient, runId: string): Promise<boolean> {
  return (await acceptedResultIdOf(db, runId)) !== null;
}

/** The run's first accepted result, or null. */
async function acceptedResultIdOf(db: PrismaClient, runId: string): Promise<string | null> {
  const accepted = await db.nativeRunResult.findFirst({ where: { runId, schemaStatus: "accepted" }, select: { id: true }, orderBy: { createdAt: "asc" } });
  return accepted?.id ?? null;
}
