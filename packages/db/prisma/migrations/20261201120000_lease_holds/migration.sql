-- Leases held for recovery and the lease cleanup sweep (issue 10 items 2 and 5). Written by hand:
-- Prisma's schema language cannot express a partial or expression index. Listed in
-- packages/db/src/schema/hand-written.ts.

-- CreateIndex (hand-written, partial): open recovery actions by the lease they name. The reuse of a
-- released lease leaves out every lease an open action names (packages/core/src/leases/lease-holds.ts).
CREATE INDEX "issue_recovery_actions_open_by_lease"
    ON "issue_recovery_actions" ("lease_id")
    WHERE "status" IN ('active', 'escalated') AND "lease_id" IS NOT NULL;

-- CreateIndex (hand-written, partial, GIN): open recovery actions by the lease ids of their evidence
-- (`evidence -> 'leaseIds' @> '["<lease id>"]'`), for actions that name more than one lease.
CREATE INDEX "issue_recovery_actions_open_lease_ids"
    ON "issue_recovery_actions" USING gin (("evidence" -> 'leaseIds') jsonb_path_ops)
    WHERE "status" IN ('active', 'escalated');

-- CreateIndex (hand-written, partial): the allocation each unsettled lease claims. The cleanup sweep
-- never takes over the cleanup of an allocation another unsettled lease also claims (R-EX-5).
CREATE INDEX "environment_leases_unsettled_allocation"
    ON "environment_leases" ("plugin_id", "provider_lease_id")
    WHERE "provider_lease_id" IS NOT NULL AND "status" IN ('active', 'pending_cleanup', 'released');

-- CreateIndex (hand-written, partial): due pending_cleanup leases, oldest first, for the cleanup
-- sweep (packages/core/src/recovery/sweeps/lease-cleanup-sweep.ts). A lease nobody has scheduled
-- yet (next_cleanup_at NULL) is due at once and sorts first.
CREATE INDEX "environment_leases_cleanup_due"
    ON "environment_leases" ("next_cleanup_at" NULLS FIRST, "id")
    WHERE "status" = 'pending_cleanup';
