// The discard intent an operator's Discard records on the lease before its destroy
// (discard-sandbox.ts step 1), and the claim that request holds meanwhile. The intent is the
// operator's decision (who, why, which acknowledged actions, which allocation through which
// plugin), so it is resumable: whoever finds it unfinished with no live claim finishes it the
// same way (resume-discard.ts; the lease cleanup sweep calls it), and a lease that carries one is
// held (lease-holds.ts: never reused, never released by the ordinary cleanup) and listed as being
// discarded (list-retained.ts), never as a sandbox with its files.
//
// Why the claim is short and renewed: a request's claim used to last 15 minutes, so a
// Discard whose process died (or whose final transaction failed) after the destroy left the
// lease claimed, its actions saying the files were kept, and every repeat Discard refused for
// that long. Whether a claimer on another host is alive cannot be read from here; what can be
// known is whether it still renews. So a live request renews its claim every
// DISCARD_CLAIM_RENEW_MS for DISCARD_CLAIM_MS; one that stopped renewing has died or lost the
// database, and after at most DISCARD_CLAIM_MS the intent is anyone's to finish. Two finishers
// stay safe: the claim is taken under the lease's row lock (only one admission or resumption
// sees it free), the destroy is idempotent, and the final record is a compare-and-set on the
// claimer's own claim (record-discard.ts), so exactly one destroy-and-record wins and a late one
// learns it lost.
import { z } from "zod";
import type { PrismaClient } from "@copyback/db/client";
import { LEASE_METADATA_KEYS } from "../leases/lease-metadata";

export const DISCARD_INTENT_SCHEMA = "copyback.sandbox-discard.v1";

/** How long a Discard's claim lasts without renewal. */
export const DISCARD_CLAIM_MS = 30_000;
/** How often a live Discard (or resumption) renews it: three renewals per claim, so one slow write does not lose it. */
export const DISCARD_CLAIM_RENEW_MS = 10_000;

const ACTOR_TYPES = ["user", "agent", "local_board", "system"] as const;

export const discardIntentSchema = z.object({
  schema: z.literal(DISCARD_INTENT_SCHEMA),
  requestId: z.uuid(),
  by: z.object({ type: z.enum(ACTOR_TYPES), id: z.string().nullable() }),
  reason: z.string().min(1),
  /** The open recovery actions the operator acknowledged, by id: exactly those record their files given up. */
  actionIds: z.array(z.uuid()),
  providerLeaseId: z.string().min(1),
  /** R-EX-6: the plugin the destroy goes through. Absent on intents recorded before the intent named its plugin: the lease's own. */
  pluginId: z.string().min(1).optional(),
  at: z.iso.datetime({ offset: true }),
  /** The earlier, interrupted Discard this one resumed (its request id). */
  resumes: z.uuid().optional(),
});
export type DiscardIntent = z.infer<typeof discardIntentSchema>;

export type DiscardIntentRead = { kind: "present"; intent: DiscardIntent } | { kind: "absent" } | { kind: "invalid"; message: string };

export function readDiscardIntent(metadata: unknown): DiscardIntentRead {
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) return { kind: "invalid", message: "lease metadata is not a JSON object" };
  const raw = (metadata as Record<string, unknown>)[LEASE_METADATA_KEYS.discardIntent];
  if (raw === undefined || raw === null) return { kind: "absent" };
  const parsed = discardIntentSchema.safeParse(raw);
  return parsed.success ? { kind: "present", intent: parsed.data } : { kind: "invalid", message: `${LEASE_METADATA_KEYS.discardIntent}: ${z.prettifyError(parsed.error)}` };
}

/** The claim an operator's own Discard request holds. */
export const discardClaimOf = (requestId: string) => `discard:${requestId}`;
/** The claim a resumption of that intent holds: another string, so the original request's final compare-and-set cannot also win. */
export const resumeClaimOf = (requestId: string, by: string) => `discard-resume:${requestId}:${by}`;

/**
 * Renews `claim` on the lease every DISCARD_CLAIM_RENEW_MS while `work` runs (never blocking: a
 * timer and one UPDATE). A renewal that fails (the database is away) is skipped: the claim may
 * lapse and another finisher take over, which the final compare-and-set makes safe.
 */
export async function whileClaimed<T>(db: Pick<PrismaClient, "$executeRaw">, lease: { leaseId: string; claim: string }, work: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => {
    db.$executeRaw`
      UPDATE environment_leases SET cleanup_claimed_until = now() + ${DISCARD_CLAIM_MS}::double precision * interval '1 millisecond'
      WHERE id = ${lease.leaseId}::uuid AND cleanup_claimed_by = ${lease.claim}`.catch(() => undefined);
  }, DISCARD_CLAIM_RENEW_MS);
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
