// R-LG-1: the exact lease snapshot a legacy run records BEFORE its adapter is dispatched. A late
// copy-back failure (reported after cancellation already stopped and released the lease) may
// preserve the released allocation only while the lease still matches this snapshot field by
// field; the snapshot names its lease by id, so it can never adopt another released lease (R-LG-2).
// Stored at heartbeat_runs.runner_profile_json.legacyLeaseSnapshot.
import { Prisma, type PrismaClient } from "@copyback/db/client";
import { z } from "zod";

export const LEGACY_LEASE_SNAPSHOT_KEY = "legacyLeaseSnapshot";
export const LEGACY_LEASE_SNAPSHOT_SCHEMA = "copyback.legacy-lease-snapshot.v1";

export const legacyLeaseSnapshotSchema = z.strictObject({
  schema: z.literal(LEGACY_LEASE_SNAPSHOT_SCHEMA),
  companyId: z.uuid(),
  runId: z.uuid(),
  issueId: z.uuid(),
  executionWorkspaceId: z.uuid(),
  leaseId: z.uuid(),
  provider: z.string().min(1),
  providerLeaseId: z.string().min(1),
  /** environment_leases.acquired_at, ISO (exact to the millisecond the column holds). */
  acquiredAt: z.iso.datetime({ offset: true }),
  pluginId: z.string().min(1),
  /** The canonical host directory the run's copy-back writes into (realpath at preparation). */
  realizedRoot: z.string().min(1),
  leasePolicy: z.enum(["ephemeral", "reuse_by_environment", "retain_on_failure"]),
  recordedAt: z.iso.datetime({ offset: true }),
});
export type LegacyLeaseSnapshot = z.infer<typeof legacyLeaseSnapshotSchema>;

export type SnapshotRead = { kind: "present"; snapshot: LegacyLeaseSnapshot } | { kind: "missing" } | { kind: "invalid"; message: string };

export function readLegacyLeaseSnapshot(runnerProfile: unknown): SnapshotRead {
  if (runnerProfile === null || typeof runnerProfile !== "object" || Array.isArray(runnerProfile)) return { kind: "missing" };
  const raw = (runnerProfile as Record<string, unknown>)[LEGACY_LEASE_SNAPSHOT_KEY];
  if (raw === undefined || raw === null) return { kind: "missing" };
  const parsed = legacyLeaseSnapshotSchema.safeParse(raw);
  return parsed.success ? { kind: "present", snapshot: parsed.data } : { kind: "invalid", message: z.prettifyError(parsed.error) };
}

/** Records the snapshot of the run's lease before the adapter runs (written once; a repeat keeps the first). */
export async function recordLegacyLeaseSnapshot(db: PrismaClient, input: { runId: string; leaseId: string; realizedRoot: string }): Promise<LegacyLeaseSnapshot> {
  const lease = await db.environmentLease.findUniqueOrThrow({ where: { id: input.leaseId } });
  const run = await db.heartbeatRun.findUniqueOrThrow({ where: { id: input.runId }, select: { id: true, companyId: true, nativeIssueId: true } });
  const snapshot = legacyLeaseSnapshotSchema.parse({
    schema: LEGACY_LEASE_SNAPSHOT_SCHEMA,
    companyId: run.companyId,
    runId: run.id,
    issueId: run.nativeIssueId,
    executionWorkspaceId: lease.executionWorkspaceId,
    leaseId: lease.id,
    provider: lease.provider,
    providerLeaseId: lease.providerLeaseId,
    acquiredAt: lease.acquiredAt.toISOString(),
    pluginId: lease.pluginId,
    realizedRoot: input.realizedRoot,
    leasePolicy: lease.leasePolicy,
    recordedAt: new Date().toISOString(),
  } satisfies Record<keyof LegacyLeaseSnapshot, unknown>);
  await db.$executeRaw(Prisma.sql`
    UPDATE heartbeat_runs
    SET runner_profile_json = jsonb_build_object(${LEGACY_LEASE_SNAPSHOT_KEY}::text, ${JSON.stringify(snapshot)}::jsonb) || runner_profile_json,
        updated_at = now()
    WHERE id = ${run.id}::uuid`);
  return snapshot;
}
