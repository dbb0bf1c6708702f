// The retained-source record (R-RR-2, R-RR-3, R-LG-1, R-LG-3): a legacy run that could not copy its
// required files back keeps its exact allocation for repair. In the caller's transaction this
//   - moves the lease to `retain_on_failure` (the ordinary reusable cleanup and the reuse query
//     select only `reuse_by_environment` leases, so the source can never return to warm reuse,
//     R-RR-6), and
//   - writes `metadata.retainedSource`, bound to company, run, lease, allocation and plugin, which
//     the resolve service verifies before it records a repair (R-RR-5);
//   - pins an active lease with a stop-only intent (pending_cleanup; stop-intent.ts), so cleanup
//     stops it and verifies the provider's receipt, never destroys it (R-RR-3). A lease that is
//     already stopped and released (the late-report path, R-LG-1) keeps its status and receipts.
// The record is control-plane evidence only (R-LG-3): it does not prove the provider still holds
// the bytes, and nothing ever reads it as proof that files were copied.
import type { TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import { pinLeaseForRecovery, type PinOutcome } from "./stop-intent";

export const RETAINED_SOURCE_KEY = "retainedSource";
export const RETAINED_SOURCE_SCHEMA = "copyback.retained-source.v1";

export const retainedSourceSchema = z.strictObject({
  schema: z.literal(RETAINED_SOURCE_SCHEMA),
  companyId: z.uuid(),
  runId: z.uuid(),
  leaseId: z.uuid(),
  providerLeaseId: z.string().min(1),
  pluginId: z.string().min(1),
  /** The lease's policy before it was retained (R-LG-1 admits only originally ephemeral late reports). */
  originalPolicy: z.enum(["ephemeral", "reuse_by_environment", "retain_on_failure"]),
  reason: z.enum(["legacy_copyback_failed", "legacy_late_copyback_failure"]),
  recordedAt: z.iso.datetime({ offset: true }),
});
export type RetainedSource = z.infer<typeof retainedSourceSchema>;

export function readRetainedSource(metadata: unknown): RetainedSource | null {
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) return null;
  const parsed = retainedSourceSchema.safeParse((metadata as Record<string, unknown>)[RETAINED_SOURCE_KEY]);
  return parsed.success ? parsed.data : null;
}

export type RetainOutcome =
  | { kind: "retained"; record: RetainedSource; pin: PinOutcome["kind"] }
  /** No allocation to keep (never allocated, destroyed, failed): nothing written. */
  | { kind: "nothing_to_retain"; status: string };

/**
 * R-RR-2: the exact lease retention intent, inside the caller's transaction (with the failed run and
 * the repair hold). `expectRunId`: the lease must still be bound to this run.
 */
export async function retainLeaseOnFailure(
  tx: TransactionClient,
  input: { leaseId: string; expectRunId: string; reason: RetainedSource["reason"] },
): Promise<RetainOutcome> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM environment_leases WHERE id = ${input.leaseId}::uuid FOR UPDATE`;
  if (locked.length !== 1) return { kind: "nothing_to_retain", status: "missing" };
  const lease = await tx.environmentLease.findUniqueOrThrow({ where: { id: input.leaseId } });
  if (lease.runId !== input.expectRunId || !lease.providerLeaseId) return { kind: "nothing_to_retain", status: lease.status };
  if (lease.status === "destroyed" || lease.status === "failed") return { kind: "nothing_to_retain", status: lease.status };
  // An active lease gets its stop-only intent now (pending_cleanup); a pending or released one keeps its own.
  const pin = await pinLeaseForRecovery(tx, lease.id);
  if (pin.kind === "nothing_to_pin") return { kind: "nothing_to_retain", status: pin.status };
  const record: RetainedSource = {
    schema: RETAINED_SOURCE_SCHEMA,
    companyId: lease.companyId,
    runId: input.expectRunId,
    leaseId: lease.id,
    providerLeaseId: lease.providerLeaseId,
    pluginId: lease.pluginId,
    originalPolicy: readRetainedSource(lease.metadata)?.originalPolicy ?? lease.leasePolicy,
    reason: input.reason,
    recordedAt: new Date().toISOString(),
  };
  await tx.$executeRaw`
    UPDATE environment_leases
    SET lease_policy = 'retain_on_failure'::lease_policy,
        metadata = metadata || jsonb_build_object(${RETAINED_SOURCE_KEY}::text, ${JSON.stringify(record)}::jsonb),
        updated_at = now()
    WHERE id = ${lease.id}::uuid`;
  return { kind: "retained", record, pin: pin.kind };
}
