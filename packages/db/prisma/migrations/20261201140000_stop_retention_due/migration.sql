-- The stop-retention sweep (issue 11 item 3, R-RC-7). Written by hand: Prisma's schema language
-- cannot express a partial index. Listed in packages/db/src/schema/hand-written.ts.

-- CreateIndex (hand-written, partial): runs a Stop cancelled whose acknowledgement has no retention
-- record yet (packages/core/src/recovery/sweeps/stop-retention-sweep.ts), oldest first. The sweep
-- records the retention of each, so the index holds only the due set.
CREATE INDEX "heartbeat_runs_stop_retention_due"
    ON "heartbeat_runs" ("finished_at" NULLS FIRST, "id")
    WHERE "status" = 'cancelled' AND "runner_profile_json" ? 'stopAcknowledgement' AND NOT ("runner_profile_json" ? 'stopRetention');
