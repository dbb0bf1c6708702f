// The export-only retry's way back (R-EX-5): when the resume, its verification or the
// re-admission fails, the sandbox is stopped and retained again by the retry's own stop-only
// intent, and nothing is re-admitted.
import type { PrismaClient } from "@copyback/db/client";
import { LEASE_METADATA_KEYS } from "../../leases/lease-metadata";
import type { LeaseProviderRegistry, LeaseReleaseOutcome } from "../../leases/lease-types";
import { stopAndRetain } from "../../leases/release-lease";
import { patchLease } from "../../leases/transition-lease";
import { recordExportRetryState } from "../../records/actions-export-retry";
import { recordRunEvent } from "../../records/run-log";
import { exportRetryClaimOf, giveBackClaimAfterFailure } from "./export-retry-claim";

/**
 * R-EX-5: stops and retains the sandbox again by this retry's recorded intent (same request id),
 * and marks the retry failed on the hold. The retry's own claim is given back first so the stop
 * can take it; a failed or unconfirmed stop stays pending_cleanup for the restart sweep.
 */
export async function stopAgain(
  deps: { db: PrismaClient; registry: LeaseProviderRegistry },
  input: { companyId: string; runId: string; actionId: string },
  requestId: string,
  leaseId: string,
  code: string,
  message: string,
): Promise<LeaseReleaseOutcome | null> {
  const { db } = deps;
  const claim = exportRetryClaimOf(input.actionId);
  await giveBackClaimAfterFailure(db, { leaseId, actionId: input.actionId });
  const lease = await db.environmentLease.findUnique({ where: { id: leaseId } });
  let outcome: LeaseReleaseOutcome | null = null;
  if (lease?.status === "pending_cleanup") {
    await patchLease(db, { leaseId, status: "pending_cleanup", metadataPatch: { [LEASE_METADATA_KEYS.failure]: { code, message: message.slice(0, 2_000), at: new Date().toISOString() } } });
    outcome = await stopAndRetain(db, deps.registry, (await db.environmentLease.findUniqueOrThrow({ where: { id: leaseId } })), { claim });
  }
  await recordExportRetryState(db, { actionId: input.actionId, requestId, state: "failed", failureCode: code, failureMessage: message });
  await recordRunEvent(db, {
    companyId: input.companyId,
    runId: input.runId,
    level: "warn",
    code: "workspace.export_retry_failed",
    message: `The export-only retry did not re-admit the run (${code}); the sandbox is stopped and retained again with its files.`,
    payload: { actionId: input.actionId, leaseId, requestId, errorCode: code, stop: outcome?.kind ?? "not_pending" },
  });
  return outcome;
}
