// R-EX-1 on a provider whose stopped sandbox cannot be read (no `exportWhileStopped`: Daytona runs
// no command in a stopped sandbox). A transient copyback failure's release stops and retains the
// sandbox (finalize-outcome-policy.ts: "failed"), so a later coordinator attempt would export from
// a stopped sandbox and could never succeed: three tries in name only. Before such an attempt
// exports, the sandbox is brought back through the same verified lifecycle as the operator's
// export-only retry (leases/resume-sandbox.ts), in the same safety order (R-EX-5):
//   1. as this finalization owner, in one compare-and-set: the stop-only intent on that exact lease
//      and its old stopped receipt removed (released -> pending_cleanup), under this attempt's
//      15-minute cleanup claim (leases/stop-intent.ts). From here on, a controller that dies (after
//      the resume, before or during the export) leaves a lease whose intent the cleanup sweep
//      stops again once the claim expired: the sandbox is never left running unowned;
//   2. the verified resume: the recorded identity, an ephemeral lease's acquisition-time sentinel
//      (R-DT-2: read after the resume on a provider that cannot read it before), then inspected
//      running and the same allocation;
//   3. a failed resume or verification: the claim given back and the sandbox stopped and retained
//      again by that same intent (a failed stop stays pending_cleanup for the sweep); the attempt
//      fails with a provider code: `provider_sandbox_resume_failed` (transient, R-RR-1: it spends
//      one of the R-EX-1 tries) or, for a replaced sandbox or a foreign sentinel,
//      `provider_identity_mismatch` (final: finalize-policy.ts; the hold keeps the lease);
//   4. after the attempt, merged or not: the claim is given back with the sweep's next look put off
//      by a claim's length; the run's release after this finalization stops the sandbox again (an
//      ephemeral one is destroyed only after the commit) by that intent (release-lease.ts).
// Why not keep such a sandbox running between attempts instead: the next attempt waits 30 s to
// minutes (finalize-policy.ts), nobody watches a running sandbox meanwhile, and the spec keeps the
// one state between a failure and its recovery stopped and retained (R-EX-1 "the exact sandbox is
// stopped and retained", R-EX-4, R-SO-1), resumed only by the verified lifecycle (R-EX-3, R-EX-5).
// A provider with `exportWhileStopped` (local, fake) exports from its stopped sandbox as before.
import { randomUUID } from "node:crypto";
import { DomainError, messageOf } from "../errors";
import { CLEANUP_CLAIM_MS } from "../leases/lease-cleanup";
import { LEASE_METADATA_KEYS } from "../leases/lease-metadata";
import type { LeaseReleaseOutcome, LeaseRow } from "../leases/lease-types";
import { stopAndRetain } from "../leases/release-lease";
import { resumeVerified } from "../leases/resume-sandbox";
import { recordExportRetryIntent } from "../leases/stop-intent";
import { giveBackCleanupClaim, patchLease } from "../leases/transition-lease";
import { hasCapability } from "../providers/registry";
import type { EnvironmentProvider } from "../providers/types";
import { recordRunEvent } from "../records/run-log";
import type { OwnedFinalization } from "./finalization-context";

/** Who holds the lease's cleanup claim while a finalization attempt works on a resumed sandbox. */
export const resumeClaimOf = (runId: string) => ({ by: `finalization:${runId}`, forMs: CLEANUP_CLAIM_MS });

/** The sandbox this attempt resumed; `giveBack` ends the attempt's claim (step 4). */
export interface ResumedForExport {
  requestId: string;
  giveBack(): Promise<void>;
}

/** Pure: a sandbox stopped and retained by an earlier failure, on a plugin that cannot export it stopped. */
export function needsResume(lease: Pick<LeaseRow, "status" | "providerLeaseId">, plugin: EnvironmentProvider): boolean {
  return lease.status === "released" && lease.providerLeaseId !== null && !hasCapability(plugin, "exportWhileStopped");
}

type ResumeFailure = { code: string; message: string; final: boolean };

/**
 * Steps 1-3 above, before this attempt's export; null when nothing needs resuming (the sandbox
 * was never stopped, is being stopped, or the plugin exports it stopped). Throws the attempt's
 * failure (after the sandbox is stopped again) when the resume or its verification fails.
 */
export async function resumeForExport(f: OwnedFinalization, plugin: EnvironmentProvider, leaseId: string): Promise<ResumedForExport | null> {
  const { db } = f.deps;
  const row = await db.environmentLease.findUnique({ where: { id: leaseId } });
  if (!row || !needsResume(row, plugin)) return null;
  // Checked before anything is written: a plugin that can neither export a stopped sandbox nor
  // resume it can never be exported from again (final; the sandbox stays stopped with its files).
  if (!hasCapability(plugin, "resume") || !hasCapability(plugin, "inspect") || (row.leasePolicy === "ephemeral" && !hasCapability(plugin, "workspaceSentinel"))) {
    throw new DomainError("conflict", "provider_capability_missing", `Plugin ${plugin.pluginId} cannot export a stopped sandbox, nor resume and verify it.`, { pluginId: plugin.pluginId, leaseId });
  }
  const providerLeaseId = row.providerLeaseId as string;
  const requestId = randomUUID();
  const claim = resumeClaimOf(f.key.runId);
  const intent = await f.owned((tx) => recordExportRetryIntent(tx, { lease: row, providerLeaseId, requestId, claim }));
  if (!intent) throw new DomainError("unavailable", "provider_sandbox_resume_failed", "The retained sandbox's lease changed before its resume; nothing was resumed.", { leaseId });
  await recordRunEvent(db, f.event("info", "workspace.sandbox_resuming", "The sandbox was stopped and retained after an earlier failed attempt, and this provider cannot export a stopped sandbox: it is resumed and verified first, and stopped again after the attempt.", { leaseId, requestId }));

  const metadata: Record<string, unknown> = { ...(row.metadata as Record<string, unknown>), [LEASE_METADATA_KEYS.stopIntent]: intent };
  delete metadata[LEASE_METADATA_KEYS.stopReceipt];
  const lease: LeaseRow = { ...row, status: "pending_cleanup", metadata: metadata as LeaseRow["metadata"] };
  let failure: ResumeFailure | null;
  try {
    const lifecycle = await resumeVerified(f.deps.registry, lease);
    if (lifecycle.kind === "failed") failure = { code: lifecycle.code, message: lifecycle.message, final: lifecycle.status === 409 };
    else if (lifecycle.inspection.kind !== "inspected" || lifecycle.inspection.state !== "running" || !lifecycle.inspection.identityMatches) {
      failure = { code: "export_retry_sandbox_replaced", message: "The resumed sandbox is not the recorded one, or not running.", final: true };
    } else failure = null;
  } catch (error) {
    failure = { code: "export_retry_resume_failed", message: messageOf(error), final: false };
  }
  if (failure) {
    const stop = await stopAgain(f, row, failure);
    const code = !failure.final ? "provider_sandbox_resume_failed" : failure.code === "provider_capability_missing" ? failure.code : "provider_identity_mismatch";
    throw new DomainError(failure.final ? "conflict" : "unavailable", code, `The retained sandbox could not be resumed for the export (${failure.code}): ${failure.message}`, { leaseId, requestId, resumeCode: failure.code, stop: stop?.kind ?? "not_pending" });
  }
  return { requestId, giveBack: () => giveBackCleanupClaim(db, { leaseId, by: claim.by, putOffSweepMs: CLEANUP_CLAIM_MS }).then(() => undefined) };
}

/** Step 3: the sandbox stopped and retained again by this attempt's intent (same request id). */
async function stopAgain(f: OwnedFinalization, row: LeaseRow, failure: ResumeFailure): Promise<LeaseReleaseOutcome | null> {
  const { db } = f.deps;
  const claim = resumeClaimOf(f.key.runId);
  await giveBackCleanupClaim(db, { leaseId: row.id, by: claim.by });
  const failed = { code: failure.code, message: failure.message.slice(0, 2_000), at: new Date().toISOString() };
  await patchLease(db, { leaseId: row.id, status: "pending_cleanup", metadataPatch: { [LEASE_METADATA_KEYS.failure]: failed } });
  const lease = await db.environmentLease.findUnique({ where: { id: row.id } });
  const outcome = lease?.status === "pending_cleanup" ? await stopAndRetain(db, f.deps.registry, lease, { claim }) : null;
  await recordRunEvent(db, f.event("warn", "workspace.sandbox_resume_failed", `The retained sandbox could not be resumed and verified (${failure.code}); it is stopped and retained again with its files.`, {
    leaseId: row.id,
    errorCode: failure.code,
    stop: outcome?.kind ?? "not_pending",
  }));
  return outcome;
}
