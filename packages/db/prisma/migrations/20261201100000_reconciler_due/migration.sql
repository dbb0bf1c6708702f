-- The reconciler's finalization sweep (issue 9, DESIGN.md section 8). Written by hand: Prisma's
-- schema language cannot express a partial index. Listed in packages/db/src/schema/hand-written.ts.

-- CreateIndex (hand-written, partial): only unfinished coordinators are in it, so selecting the
-- due ones is O(unfinished), never a scan of every run that ever committed. Per company, so the
-- sweep can take the oldest due units of each company in turn (fairness).
CREATE INDEX "native_run_finalizations_due"
    ON "native_run_finalizations" ("company_id", "next_attempt_at", "updated_at")
    WHERE "phase" IN ('result_accepted', 'workspace_finalizing', 'arbitrating', 'retryable_failure');

-- CreateIndex (hand-written, partial): open recovery actions by cause (the company Recovery page,
-- the owner-hold sweeps and the due selection's hold exclusion).
CREATE INDEX "issue_recovery_actions_open_by_cause"
    ON "issue_recovery_actions" ("cause", "company_id", "created_at")
    WHERE "status" IN ('active', 'escalated');
