-- Environment lease guards (issue 5 item 4). Written by hand: Prisma's schema language cannot
-- express a partial index, so `migration:create` finds nothing to diff and the schema stays as
-- it is. The index is listed in packages/db/src/schema/hand-written.ts so the migrations test
-- checks that it exists and that no diff proposes to drop it.

-- CreateIndex (hand-written, partial): one active ephemeral lease per environment and execution
-- workspace. A second acquisition for the same pair fails on this index (`lease_busy`) instead of
-- allocating a second sandbox that would race the first one's copyback. Released, destroyed,
-- failed and pending-cleanup leases stay as history and never block a new one.
CREATE UNIQUE INDEX "environment_leases_one_active_ephemeral"
    ON "environment_leases" ("environment_id", "execution_workspace_id")
    WHERE "status" = 'active' AND "lease_policy" = 'ephemeral';
