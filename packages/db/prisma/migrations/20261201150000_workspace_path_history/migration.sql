-- Workspace history (issue 14 section 2): which committed run last wrote or deleted a path. Written
-- by hand: Prisma's schema language cannot express a partial GIN index on a JSON expression.
-- Listed in packages/db/src/schema/hand-written.ts.

-- CreateIndex (hand-written, partial GIN): the paths a succeeded copyback wrote, from the
-- `changes` record of its workspace_finalize operation (core finalization/finalize-changes.ts),
-- so `jsonb ? path` finds the commits that touched one path without reading the others.
CREATE INDEX "workspace_operations_written_paths"
    ON "workspace_operations" USING gin (("metadata" -> 'changes' -> 'written'))
    WHERE "phase" = 'workspace_finalize' AND "status" = 'succeeded';

-- CreateIndex (hand-written, partial GIN): the paths it deleted, likewise.
CREATE INDEX "workspace_operations_deleted_paths"
    ON "workspace_operations" USING gin (("metadata" -> 'changes' -> 'deleted'))
    WHERE "phase" = 'workspace_finalize' AND "status" = 'succeeded';
