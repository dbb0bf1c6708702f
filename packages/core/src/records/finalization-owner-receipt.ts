// The finalization owner receipt (R-OWN-7): `runner_profile_json.nativeWorkspaceFinalizationOwner`
// = { token, host, pid, processStart, bootId, platform? }, written by the copyback's owner
// (finalization/finalization-owner.ts) and read by every judge of a stale owner: its schema, its
// reader, the identity of a malformed one, and why an owner could not be verified stopped.
import { Prisma, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import { recordedPlatform } from "../platforms/platform-identity";
import { processIdentityFields } from "./process-identity-record";

export const FINALIZATION_OWNER_KEY = "nativeWorkspaceFinalizationOwner";

// The owner's identity under the receipt's own key names (processStart: R-OWN-7's wire format),
// with the fields of the one process-identity schema.
export const finalizationOwnerReceipt = z.object({
  token: z.string().min(16),
  host: processIdentityFields.host,
  pid: processIdentityFields.pid,
  /** /proc/<pid>/stat start time (R-OWN-12). */
  processStart: processIdentityFields.startTime,
  bootId: processIdentityFields.bootId,
  /**
   * R-RW-1: the cloud deployment the controller ran in, when it runs on a platform whose harness
   * can prove its stop. Absent on receipts of controllers on no recognised platform and on every
   * receipt written before it existed (R-RW-6: those keep the operator path; it is never inferred).
   */
  platform: recordedPlatform.optional(),
});
export type FinalizationOwnerReceipt = z.infer<typeof finalizationOwnerReceipt>;

/** The receipt on a run, or null when there is none. A malformed one still counts as present. */
export function readFinalizationOwner(
  runnerProfileJson: unknown,
): { kind: "none" } | { kind: "receipt"; receipt: FinalizationOwnerReceipt } | { kind: "malformed" } {
  if (typeof runnerProfileJson !== "object" || runnerProfileJson === null || !(FINALIZATION_OWNER_KEY in runnerProfileJson)) {
    return { kind: "none" };
  }
  const parsed = finalizationOwnerReceipt.safeParse((runnerProfileJson as Record<string, unknown>)[FINALIZATION_OWNER_KEY]);
  return parsed.success ? { kind: "receipt", receipt: parsed.data } : { kind: "malformed" };
}

/**
 * The identity of a receipt too malformed to have a usable token: the sha256 of the
 * receipt as PostgreSQL stores it (jsonb's own text, so every reader computes the same bytes).
 * One expression for the unverified-owner hold that names it, its stale cleanup, the attestation
 * that releases it and the maintenance SQL's malformed-receipt form (guidance.ts).
 */
export function receiptSha256Sql(runAlias?: string): Prisma.Sql {
  const column = runAlias ? `${runAlias}.runner_profile_json` : "runner_profile_json";
  return Prisma.raw(`encode(sha256(convert_to((${column} -> '${FINALIZATION_OWNER_KEY}')::text, 'UTF8')), 'hex')`);
}

/** The stored receipt's sha256 (receiptSha256Sql), or null when the run carries none. */
export async function readReceiptSha256(db: PrismaClient | TransactionClient, runId: string): Promise<string | null> {
  const [row] = await db.$queryRaw<{ sha: string | null }[]>`SELECT ${receiptSha256Sql()} AS sha FROM heartbeat_runs WHERE id = ${runId}::uuid`;
  return row?.sha ?? null;
}

/** Why a receipt's controller could not be proven stopped (decideTakeover, R-OWN-11). */
export type UnverifiedReason =
  | "receipt_malformed"
  | "controller_exited_without_barrier"
  | "controller_on_other_host"
  | "controller_unobservable";
