-- Issue 20: the lease cleanup sweep finishes operators' Discards that their requests did not
-- finish (packages/core/src/sandboxes/resume-discard.ts). Written by hand: Prisma's schema language
-- cannot express a partial index. Listed in packages/db/src/schema/hand-written.ts.

-- CreateIndex (hand-written, partial): leases with a discard intent that are not destroyed yet, by
-- their next try (packages/core/src/recovery/sweeps/lease-cleanup-sweep.ts dueDiscardResumptionsSql).
-- A finished Discard leaves the lease destroyed, so the index holds only the unfinished ones.
CREATE INDEX "environment_leases_discard_due"
    ON "environment_leases" ("next_cleanup_at" NULLS FIRST, "id")
    WHERE "status" <> 'destroyed' AND jsonb_typeof("metadata" -> 'sandboxDiscard') = 'object';
