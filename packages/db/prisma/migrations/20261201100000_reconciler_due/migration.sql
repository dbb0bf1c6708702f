-- Recovery actions by cause (issue 9, DESIGN.md section 8). Written by hand: Prisma's schema
-- language cannot express a partial index. Listed in packages/db/src/schema/hand-written.ts.
-- (The finalization sweep's due selection reads native_run_finalizations through the existing
-- (phase, next_attempt_at) index, which holds the unfinished phases in their own range:
-- bench/reconciler.ts prints the plan.)

-- CreateIndex (hand-written, partial): open recovery actions by cause (the company Recovery page,
-- the owner-hold sweeps and the due selection's hold exclusion).
CREATE INDEX "issue_recovery_actions_open_by_cause"
    ON "issue_recovery_actions" ("cause", "company_id", "created_at")
    WHERE "status" IN ('active', 'escalated');
