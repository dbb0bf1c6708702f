// Workspace history: for one path of a host workspace, which committed runs
// wrote or deleted it and when, newest first. Every path a copyback wrote or deleted is a row of
// `workspace_path_changes`, written in the barrier transaction with its succeeded
// `workspace_finalize` operation (finalize-run.ts); the table's primary key (workspace, path,
// time, operation) is the lookup, so it reads only the rows of that path however many commits
// the workspace has. A run whose barrier landed but that never committed is left out at read time.
import type { PrismaClient } from "@copyback/db/client";
import type { DbOrTx } from "../records/run-log";
import { isSafeRelativePath } from "../copyback/manifest/paths";
import { invalid } from "../errors";

export interface PathHistoryEntry {
  runId: string;
  issueId: string;
  operationId: string;
  change: "written" | "deleted";
  committedAt: Date;
}

export interface PathHistory {
  executionWorkspaceId: string;
  path: string;
  entries: PathHistoryEntry[];
}

/** What one copyback changed in one host workspace (the merge's relative paths). */
export interface PathChanges {
  executionWorkspaceId: string;
  written: readonly string[];
  deleted: readonly string[];
}

interface Row {
  run_id: string;
  issue_id: string;
  id: string;
  written: boolean;
  finished_at: Date;
}

/**
 * Records every path of one succeeded copyback, in the caller's barrier transaction: one
 * statement per list (a full copyback of 10,000 files is one INSERT of 10,000 rows). A path that
 * appears twice for one operation (a file replaced by a directory) keeps its first row.
 */
export async function recordPathChanges(tx: DbOrTx, input: PathChanges & { companyId: string; operationId: string }): Promise<void> {
  for (const [paths, written] of [[input.written, true], [input.deleted, false]] as const) {
    if (paths.length === 0) continue;
    await tx.$executeRaw`
      INSERT INTO workspace_path_changes (execution_workspace_id, path, recorded_at, operation_id, company_id, written)
      SELECT ${input.executionWorkspaceId}::uuid, p, now(), ${input.operationId}::uuid, ${input.companyId}::uuid, ${written}
      FROM unnest(${[...paths]}::text[]) AS p
      ON CONFLICT DO NOTHING`;
  }
}

export async function workspacePathHistory(
  db: Pick<PrismaClient, "$queryRaw">,
  input: { companyId: string; executionWorkspaceId: string; path: string; limit: number },
): Promise<PathHistory> {
  if (!isSafeRelativePath(input.path)) throw invalid("workspace_path_invalid", "The path must be relative to the workspace root, without '..', '.' or empty segments.");
  const rows = await db.$queryRaw<Row[]>`
    SELECT f.run_id, f.issue_id, f.id, c.written, f.finished_at
    FROM workspace_path_changes c
    JOIN workspace_operations f ON f.id = c.operation_id
    WHERE c.execution_workspace_id = ${input.executionWorkspaceId}::uuid AND c.path = ${input.path} AND c.company_id = ${input.companyId}::uuid
      AND EXISTS (SELECT 1 FROM native_run_finalizations nf WHERE nf.run_id = f.run_id AND nf.phase = 'committed')
    ORDER BY c.recorded_at DESC, c.operation_id DESC
    LIMIT ${input.limit}`;
  return {
    executionWorkspaceId: input.executionWorkspaceId,
    path: input.path,
    entries: rows.map((r) => ({ runId: r.run_id, issueId: r.issue_id, operationId: r.id, change: r.written ? "written" : "deleted", committedAt: r.finished_at })),
  };
}
