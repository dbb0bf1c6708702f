-- The historical unsafe export sweep (issue 10 item 7, R-UA-5). Written by hand: Prisma's schema
-- language cannot express a partial index. Listed in packages/db/src/schema/hand-written.ts.

-- CreateIndex (hand-written, partial): coordinators an older controller terminalized with the
-- unsafe-archive code, by company and age (packages/core/src/recovery/sweeps/historical-unsafe-sweep.ts).
-- New controllers never write that code, so the index holds a finite, shrinking set.
CREATE INDEX "native_run_finalizations_historical_unsafe"
    ON "native_run_finalizations" ("company_id", "updated_at", "run_id")
    WHERE "phase" = 'terminal_failure' AND "failure_code" = 'native_workspace_sync_out_unsafe_archive';
