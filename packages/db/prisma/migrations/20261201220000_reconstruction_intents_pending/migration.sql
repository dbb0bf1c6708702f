-- The reconstruction delivery sweep (R-RC-5). Written by hand: Prisma's schema language cannot
-- express a partial index. Listed in packages/db/src/schema/hand-written.ts.

-- CreateIndex (hand-written, partial): the pending "Continue from saved sources" intents
-- (packages/core/src/recovery/sweeps/reconstruction-delivery-sweep.ts), oldest first. A delivery
-- marks its intent delivered, so the index holds only the due set.
CREATE INDEX "reconstruction_intents_pending"
    ON "reconstruction_intents" ("created_at", "id")
    WHERE "status" = 'pending';
