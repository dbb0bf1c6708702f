// Workspace history (issue 14 section 2): for one path of a host workspace, which committed runs
// wrote or deleted it and when, newest first. Kept from the `changes` record of each succeeded
// `workspace_finalize` operation (finalization/finalize-changes.ts) and found through the partial
// GIN indexes workspace_operations_written_paths / _deleted_paths (`jsonb ? path`), so a lookup
// reads only the commits that touched that path. The record keeps at most 500 paths per list
// (MAX_RECORDED_PATHS, the first ones in sorted order): a path beyond them in a copyback that
// changed more is not found in that copyback (its counts stay exact on the run page).
import { Prisma, type PrismaClient } from "@copyback/db/client";
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

interface Row {
  run_id: string;
  issue_id: string;
  id: string;
  wrote: boolean;
  finished_at: Date;
}

export async function workspacePathHistory(
  db: Pick<PrismaClient, "$queryRaw">,
  input: { companyId: string; executionWorkspaceId: string; path: string; limit: number },
): Promise<PathHistory> {
  if (!isSafeRelativePath(input.path)) throw invalid("workspace_path_invalid", "The path must be relative to the workspace root, without '..', '.' or empty segments.");
  const p = input.path;
  const inWorkspace = (alias: string) => Prisma.sql`EXISTS (
      SELECT 1 FROM workspace_operations prep
      WHERE prep.company_id = ${input.companyId}::uuid AND prep.run_id = ${Prisma.raw(alias)}.run_id
        AND prep.phase = 'workspace_prepare' AND prep.status = 'succeeded'
        AND prep.metadata ->> 'executionWorkspaceId' = ${input.executionWorkspaceId})`;
  const rows = await db.$queryRaw<Row[]>`
    SELECT f.run_id, f.issue_id, f.id, (f.metadata -> 'changes' -> 'written') ? ${p} AS wrote, f.finished_at
    FROM workspace_operations f
    WHERE f.company_id = ${input.companyId}::uuid AND f.phase = 'workspace_finalize' AND f.status = 'succeeded'
      AND ((f.metadata -> 'changes' -> 'written') ? ${p} OR (f.metadata -> 'changes' -> 'deleted') ? ${p})
      AND ${inWorkspace("f")}
      AND EXISTS (SELECT 1 FROM native_run_finalizations nf WHERE nf.run_id = f.run_id AND nf.phase = 'committed')
    ORDER BY f.finished_at DESC, f.id DESC
    LIMIT ${input.limit}`;
  return {
    executionWorkspaceId: input.executionWorkspaceId,
    path: p,
    entries: rows.map((r) => ({ runId: r.run_id, issueId: r.issue_id, operationId: r.id, change: r.wrote ? "written" : "deleted", committedAt: r.finished_at })),
  };
}
