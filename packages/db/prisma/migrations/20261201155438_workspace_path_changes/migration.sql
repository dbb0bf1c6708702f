-- Workspace history (issue 14 section 2) for every path: one row per path a copyback wrote or
-- deleted, written with its succeeded workspace_finalize operation. The operation's `changes`
-- record keeps only 500 paths per list (for the run page); the partial GIN indexes over it, which
-- answered the lookup before, could not find a path beyond them.

-- CreateTable
CREATE TABLE "workspace_path_changes" (
    "execution_workspace_id" UUID NOT NULL,
    "path" TEXT NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL,
    "operation_id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "written" BOOLEAN NOT NULL,

    CONSTRAINT "workspace_path_changes_pkey" PRIMARY KEY ("execution_workspace_id","path","recorded_at","operation_id")
);

-- Backfill (hand-written): the paths the existing records kept. The workspace is the one the run's
-- succeeded preparation names; a path a record had to leave out stays unknown for that copyback.
INSERT INTO "workspace_path_changes" ("execution_workspace_id", "path", "recorded_at", "operation_id", "company_id", "written")
SELECT DISTINCT ON (ws.id, p.path, f.finished_at, f.id) ws.id, p.path, f.finished_at, f.id, f.company_id, p.written
FROM "workspace_operations" f
JOIN "workspace_operations" prep
  ON prep.company_id = f.company_id AND prep.run_id = f.run_id
 AND prep.phase = 'workspace_prepare' AND prep.status = 'succeeded'
JOIN "execution_workspaces" ws
  ON ws.company_id = f.company_id AND ws.id::text = prep.metadata ->> 'executionWorkspaceId'
CROSS JOIN LATERAL (
  SELECT jsonb_array_elements_text(f.metadata -> 'changes' -> 'written') AS path, true AS written
  WHERE jsonb_typeof(f.metadata -> 'changes' -> 'written') = 'array'
  UNION ALL
  SELECT jsonb_array_elements_text(f.metadata -> 'changes' -> 'deleted'), false
  WHERE jsonb_typeof(f.metadata -> 'changes' -> 'deleted') = 'array'
) p
WHERE f.phase = 'workspace_finalize' AND f.status = 'succeeded' AND f.finished_at IS NOT NULL;

-- DropIndex (hand-written indexes of 20261201150000_workspace_path_history, no longer read)
DROP INDEX IF EXISTS "workspace_operations_written_paths";
DROP INDEX IF EXISTS "workspace_operations_deleted_paths";
