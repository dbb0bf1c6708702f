// Recording a stop-only (stop-and-retain) intent inside the caller's transaction (R-EX-4): a
// terminal export failure pins the exact sandbox in the same transaction that fails the run, so
// a crash between the two can never leave an active lease without its intent. The provider is
// asked to stop afterwards, by the ordinary release (or the cleanup sweep after a restart), which
// continues exactly this recorded intent (same request id).
import { randomUUID } from "node:crypto";
import { Prisma, type TransactionClient } from "@copyback/db/client";
import { LEASE_METADATA_KEYS, readStopIntent, STOP_INTENT_SCHEMA, type StopIntent } from "./lease-metadata";
import type { LeaseRow } from "./lease-types";
import { transitionLease } from "./transition-lease";

/** A new v2 intent for the lease's exact allocation, pinned to its recorded plugin (R-EX-7). */
export function newStopIntent(lease: Pick<LeaseRow, "id" | "companyId" | "runId" | "pluginId">, providerLeaseId: string): StopIntent {
  return {
    schema: STOP_INTENT_SCHEMA,
    companyId: lease.companyId,
    runId: lease.runId ?? "",
    leaseId: lease.id,
    providerLeaseId,
    pluginId: lease.pluginId,
    requestId: randomUUID(),
    createdAt: new Date().toISOString(),
  };
}

export type PinOutcome =
  /** The active lease moved to pending_cleanup with a new stop-only intent. */
  | { kind: "pinned"; intent: StopIntent }
  /** It already carries a stop-only intent (pending), or it is stopped and released with its files. */
  | { kind: "already_pinned" }
  /** Nothing to pin: no allocation was ever recorded, or the sandbox is gone. */
  | { kind: "nothing_to_pin"; status: string };

/** Pins the run's lease for its files (R-EX-4): never a release or a destroy. */
export async function pinLeaseForRecovery(tx: TransactionClient, leaseId: string): Promise<PinOutcome> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM environment_leases WHERE id = ${leaseId}::uuid FOR UPDATE`;
  const row = locked.length === 1 ? await tx.environmentLease.findUniqueOrThrow({ where: { id: leaseId } }) : null;
  if (!row) return { kind: "nothing_to_pin", status: "missing" };
  if (row.status === "pending_cleanup" && readStopIntent(row.metadata, row).kind === "present") return { kind: "already_pinned" };
  if (row.status === "released") return { kind: "already_pinned" };
  if (row.status !== "active" || !row.providerLeaseId) return { kind: "nothing_to_pin", status: row.status };
  const intent = newStopIntent(row, row.providerLeaseId);
  const won = await transitionLease(tx, {
    leaseId: row.id,
    from: ["active"],
    to: "pending_cleanup",
    metadataPatch: { [LEASE_METADATA_KEYS.stopIntent]: intent, [LEASE_METADATA_KEYS.stopReceipt]: null },
  });
  return won ? { kind: "pinned", intent } : { kind: "already_pinned" };
}

/**
 * R-EX-5: the export-only retry's one way back from `released`: before the retained sandbox is
 * resumed, its lease gets a stop-only intent and loses its old stopped receipt, in one
 * compare-and-set on the status and on that exact receipt, under the retry's cleanup claim. Not
 * an edge of the ordinary status machine (lease-status.ts): no release or reuse can take it.
 * Returns whether this caller won.
 */
export async function recordExportRetryIntent(
  tx: TransactionClient,
  input: { lease: Pick<LeaseRow, "id" | "companyId" | "runId" | "pluginId" | "metadata">; providerLeaseId: string; requestId: string; claim: { by: string; forMs: number } },
): Promise<StopIntent | null> {
  const intent: StopIntent = { ...newStopIntent(input.lease, input.providerLeaseId), requestId: input.requestId };
  const receipt = (input.lease.metadata as Record<string, unknown> | null)?.[LEASE_METADATA_KEYS.stopReceipt];
  if (receipt === undefined || receipt === null) return null;
  const changed = await tx.$executeRaw(Prisma.sql`
    UPDATE environment_leases
    SET status = 'pending_cleanup'::lease_status,
        metadata = (metadata - ${[LEASE_METADATA_KEYS.stopReceipt, LEASE_METADATA_KEYS.sandboxSize, LEASE_METADATA_KEYS.failure]}::text[]) || jsonb_build_object(${LEASE_METADATA_KEYS.stopIntent}::text, ${JSON.stringify(intent)}::jsonb),
        cleanup_claimed_by = ${input.claim.by},
        cleanup_claimed_until = now() + ${input.claim.forMs}::double precision * interval '1 millisecond',
        updated_at = now()
    WHERE id = ${input.lease.id}::uuid AND status = 'released'::lease_status
      AND jsonb_typeof(metadata) = 'object'
      AND metadata -> ${LEASE_METADATA_KEYS.stopReceipt} = ${JSON.stringify(receipt)}::jsonb`);
  return changed === 1 ? intent : null;
}
