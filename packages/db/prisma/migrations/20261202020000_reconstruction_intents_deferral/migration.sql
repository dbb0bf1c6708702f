-- R-RC-3, R-RC-5: why a pending "Continue from saved sources" intent waits. A transient refusal
-- at delivery (another recovery action open, a run still active, a copyback owner, ...) left the
-- intent pending with nothing recorded, so the task's notice said "Continuing from saved
-- sources…" with no reason for as long as the cause lasted. Columns rather than one of the
-- intent's JSON columns: `attachment_hashes` and `external_action_outcomes` are the operator's
-- decision, which delivery rechecks against and never rewrites; the deferral is the reconciler's
-- observation of it, nullable and cleared on delivery, cancellation or a fresh decision.
-- Written by the delivery sweep only when the code changes (the sweep runs every 5 s); the
-- live-notify trigger on this table announces each such write.

-- AlterTable
ALTER TABLE "reconstruction_intents" ADD COLUMN     "deferral_code" TEXT,
ADD COLUMN     "deferral_message" TEXT,
ADD COLUMN     "deferral_seen_at" TIMESTAMPTZ(3),
ADD COLUMN     "deferred_since" TIMESTAMPTZ(3);
