// Compare-and-set writes of environment_leases. A transition is one UPDATE ... WHERE id = $1 AND
// status IN (from): it wins only if the lease is still in one of the expected statuses, so
// concurrent writers (two runs reusing one released lease, a release racing a cleanup sweep)
// never both succeed. The metadata patch is merged in the same statement.
import { Prisma, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { invalid } from "../errors";
import { forbiddenTransitions, type LeaseStatus } from "./lease-status";
import { leaseHeldSql } from "./lease-holds";
import type { LeaseMetadataKey } from "./lease-metadata";
import { CLEANUP_BACKOFF_MS, CLEANUP_DEFER_MS } from "./provider-retry-policy";

export type LeaseDb = PrismaClient | TransactionClient;

/** Keys to set (a JSON value) or remove (null) in environment_leases.metadata. */
export type LeaseMetadataPatch = Partial<Record<LeaseMetadataKey, unknown>>;

export interface TransitionLeaseInput {
  leaseId: string;
  from: readonly LeaseStatus[];
  to: LeaseStatus;
  metadataPatch?: LeaseMetadataPatch;
  /** Columns rebound with the transition (a reused lease moves to the new run). */
  set?: LeaseColumnPatch;
  /**
   * An extra compare: the metadata document under `key` must still equal `value` (as jsonb), so
   * a decision taken on a read snapshot (this receipt is confirmed) still holds when it is applied.
   */
  expectMetadata?: { key: LeaseMetadataKey; value: unknown };
  /** Only a lease that holds no files for recovery (lease-holds.ts) moves: the reuse of a released lease. */
  notHeld?: boolean;
}

export interface LeaseColumnPatch {
  runId?: string;
  issueId?: string | null;
  providerLeaseId?: string;
  /** R-EX-5: who holds the cleanup claim and for how long (null releases it). */
  cleanupClaim?: { by: string; forMs: number } | null;
}

/**
 * Moves a lease from one of `from` to `to` if it is still in one of `from`; returns whether this
 * call won. A transition the status machine does not allow is a caller bug: it throws
 * DomainError invalid `lease_transition_not_allowed` and writes nothing.
 */
export async function transitionLease(db: LeaseDb, input: TransitionLeaseInput): Promise<boolean> {
  const forbidden = forbiddenTransitions(input.from, input.to);
  if (input.from.length === 0 || forbidden.length > 0) {
    throw invalid(
      "lease_transition_not_allowed",
      `A lease cannot move from ${forbidden.join(", ") || "no status"} to ${input.to}.`,
      { from: [...input.from], to: input.to },
    );
  }
  const assignments = [Prisma.sql`status = ${input.to}::lease_status`];
  if (input.to === "released" || input.to === "destroyed") assignments.push(Prisma.sql`released_at = now()`);
  if (input.to === "active") assignments.push(Prisma.sql`released_at = NULL`);
  return casUpdate(db, { ...input, assignments });
}

/**
 * Writes metadata and columns of a lease that is still in `status`, without changing it (the
 * allocation recorded on a fresh active lease). Returns whether the lease was still there.
 */
export function patchLease(
  db: LeaseDb,
  input: { leaseId: string; status: LeaseStatus; metadataPatch?: LeaseMetadataPatch; set?: LeaseColumnPatch; expectMetadata?: TransitionLeaseInput["expectMetadata"] },
): Promise<boolean> {
  return casUpdate(db, { ...input, from: [input.status], assignments: [] });
}

/**
 * R-EX-5: takes the cleanup claim of a pending_cleanup lease if nobody holds it (or the holder's
 * claim expired) and its intent is still `intentJson`; returns whether this caller holds it.
 */
export function claimPendingCleanup(
  db: LeaseDb,
  input: {
    leaseId: string;
    by: string;
    forMs: number;
    intentJson: unknown;
    /** Where the intent sits: the stop-and-retain intent (default) or the destroy intent. */
    intentKey?: "sandboxStopAndRetain" | "sandboxDestroy";
    /**
     * The cleanup sweep's takeover: only a lease whose next cleanup is due (next_cleanup_at), so two
     * sweeps that selected the same lease do not repeat an attempt the other just counted.
     */
    dueOnly?: boolean;
  },
): Promise<boolean> {
  return casUpdate(db, {
    leaseId: input.leaseId,
    from: ["pending_cleanup"],
    assignments: [],
    set: { cleanupClaim: { by: input.by, forMs: input.forMs } },
    expectMetadata: { key: input.intentKey ?? "sandboxStopAndRetain", value: input.intentJson },
    claimFree: true,
    dueOnly: input.dueOnly === true,
  });
}

async function casUpdate(
  db: LeaseDb,
  input: Omit<TransitionLeaseInput, "to"> & { assignments: Prisma.Sql[]; claimFree?: boolean; dueOnly?: boolean },
): Promise<boolean> {
  const assignments = [...input.assignments, Prisma.sql`updated_at = now()`, metadataAssignment(input.metadataPatch ?? {})];
  if (input.set?.runId !== undefined) assignments.push(Prisma.sql`run_id = ${input.set.runId}::uuid`);
  if (input.set?.issueId !== undefined) assignments.push(Prisma.sql`issue_id = ${input.set.issueId}::uuid`);
  if (input.set?.providerLeaseId !== undefined) assignments.push(Prisma.sql`provider_lease_id = ${input.set.providerLeaseId}`);
  if (input.set?.cleanupClaim === null) assignments.push(Prisma.sql`cleanup_claimed_by = NULL, cleanup_claimed_until = NULL`);
  if (input.set?.cleanupClaim) {
    assignments.push(
      Prisma.sql`cleanup_claimed_by = ${input.set.cleanupClaim.by}, cleanup_claimed_until = now() + ${input.set.cleanupClaim.forMs}::double precision * interval '1 millisecond'`,
    );
  }

  const conditions = [
    Prisma.sql`id = ${input.leaseId}::uuid`,
    Prisma.sql`status IN (${Prisma.join(input.from.map((status) => Prisma.sql`${status}::lease_status`))})`,
  ];
  if (input.claimFree) conditions.push(Prisma.sql`(cleanup_claimed_until IS NULL OR cleanup_claimed_until < now())`);
  if (input.dueOnly) conditions.push(Prisma.sql`(next_cleanup_at IS NULL OR next_cleanup_at <= now())`);
  if (input.notHeld) conditions.push(Prisma.sql`NOT ${leaseHeldSql("environment_leases")}`);
  if (input.expectMetadata) {
    conditions.push(
      Prisma.sql`metadata -> ${input.expectMetadata.key} = ${JSON.stringify(input.expectMetadata.value)}::jsonb`,
    );
  }
  const changed = await db.$executeRaw(Prisma.sql`
    UPDATE environment_leases SET ${Prisma.join(assignments, ", ")} WHERE ${Prisma.join(conditions, " AND ")}`);
  return changed === 1;
}

/**
 * Records a failed cleanup attempt on a lease that is still `pending_cleanup` (the restart sweep
 * reads cleanup_attempts), schedules the next one by the cleanup backoff (CLEANUP_BACKOFF_MS, the
 * n-th failure waits the n-th delay, then the last) and gives up the cleanup claim. An unavailable
 * plugin does not call this: it defers without spending an attempt (deferCleanup, R-EX-6).
 */
export async function recordCleanupAttempt(db: LeaseDb, leaseId: string, metadataPatch: LeaseMetadataPatch): Promise<boolean> {
  const backoff = Prisma.sql`(ARRAY[${Prisma.join([...CLEANUP_BACKOFF_MS])}]::double precision[])[least(cleanup_attempts, ${CLEANUP_BACKOFF_MS.length - 1}) + 1]`;
  const changed = await db.$executeRaw(Prisma.sql`
    UPDATE environment_leases
       SET cleanup_attempts = cleanup_attempts + 1, updated_at = now(), ${metadataAssignment(metadataPatch)},
           next_cleanup_at = now() + ${backoff} * interval '1 millisecond',
           cleanup_claimed_by = NULL, cleanup_claimed_until = NULL
     WHERE id = ${leaseId}::uuid AND status = 'pending_cleanup'::lease_status`);
  return changed === 1;
}

/**
 * R-EX-6: puts off the cleanup of a `pending_cleanup` lease that asked nothing of the provider
 * (its plugin is unavailable or lacks the operation, its intent does not match the lease, another
 * owner claims its allocation): gives up the claim if `by` holds it (or nobody does) and schedules
 * the next look CLEANUP_DEFER_MS later, without spending an attempt. A claim someone else holds is
 * left alone and nothing is written. The optional note is diagnostics only.
 */
export async function deferCleanup(
  db: LeaseDb,
  input: { leaseId: string; by: string; metadataPatch?: LeaseMetadataPatch },
): Promise<boolean> {
  const changed = await db.$executeRaw(Prisma.sql`
    UPDATE environment_leases
       SET updated_at = now(), ${metadataAssignment(input.metadataPatch ?? {})},
           next_cleanup_at = now() + ${CLEANUP_DEFER_MS}::double precision * interval '1 millisecond',
           cleanup_claimed_by = NULL, cleanup_claimed_until = NULL
     WHERE id = ${input.leaseId}::uuid AND status = 'pending_cleanup'::lease_status
       AND (cleanup_claimed_until IS NULL OR cleanup_claimed_until < now() OR cleanup_claimed_by = ${input.by})`);
  return changed === 1;
}

/**
 * R-EX-5: gives back the cleanup claim `by` holds on a pending_cleanup lease, comparing the holder
 * (cleanup_claimed_by = by), so a claim the cleanup sweep took over after this one expired is never
 * cleared. `putOffSweepMs`: the sweep's next look is put off that long (the holder's own release
 * follows and stops the sandbox by the intent; the sweep still finds it if that never happens).
 * Returns whether `by` still held it.
 */
export async function giveBackCleanupClaim(db: LeaseDb, input: { leaseId: string; by: string; putOffSweepMs?: number }): Promise<boolean> {
  const putOff =
    input.putOffSweepMs === undefined ? Prisma.empty : Prisma.sql`, next_cleanup_at = now() + ${input.putOffSweepMs}::double precision * interval '1 millisecond'`;
  const changed = await db.$executeRaw(Prisma.sql`
    UPDATE environment_leases SET cleanup_claimed_by = NULL, cleanup_claimed_until = NULL, updated_at = now()${putOff}
     WHERE id = ${input.leaseId}::uuid AND status = 'pending_cleanup'::lease_status AND cleanup_claimed_by = ${input.by}`);
  return changed === 1;
}

function metadataAssignment(patch: LeaseMetadataPatch): Prisma.Sql {
  const set: Record<string, unknown> = {};
  const remove: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) remove.push(key);
    else set[key] = value;
  }
  // A metadata value that is not an object (written by hand) is kept under `malformed` as
  // evidence rather than concatenated into an array; it grants nothing either way.
  return Prisma.sql`metadata = (CASE WHEN jsonb_typeof(metadata) = 'object' THEN metadata
                                     ELSE jsonb_build_object('malformed', metadata) END
                                || ${JSON.stringify(set)}::jsonb) - ${remove}::text[]`;
}
