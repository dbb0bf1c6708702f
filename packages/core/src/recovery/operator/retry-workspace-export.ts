// The export-only retry (R-EX-2, R-EX-3, R-EX-5, R-DT-2): the one service behind
//   POST /api/issues/:id/recovery-actions/retry-workspace-export (REST),
//   recovery.retryWorkspaceExport (tRPC) and `copyback recovery retry-export` (CLI).
// The caller has checked `runtime:manage`. In order:
//   1. the exact sandbox is inspected through the lease's pinned plugin (R-EX-6), before any lock;
//   2. ONE transaction takes the run's finalization advisory lock (the finalizer's, so it shares
//      finalization ownership), loads the snapshot under row locks and asks decideExportRetry.
//      A refusal writes nothing (the transaction rolls back); a duplicate answers the same and
//      writes nothing. On admission: a stop-only intent on that exact lease with the old stopped
//      receipt removed (released -> pending_cleanup, R-EX-5) under this retry's 15-minute cleanup
//      claim, and the request with its repair note on the hold;
//   3. the verified lifecycle, outside any transaction: the in-sandbox sentinel is read while the
//      sandbox is still stopped and compared with the lease's (R-DT-2), the plugin's resume drains
//      old activity, verifies the workspace identity and only then reopens admission; then the
//      sandbox is probed again (inspect and sentinel). A lost resume reply, a failed probe or a
//      changed admission stops and retains the sandbox again by that same intent and answers an
//      error; nothing is re-admitted;
//   4. ONE transaction re-admits under the lock: decideExportRetry again ("readmit"), the
//      coordinator back to result_accepted (the readmission edge, exhausted code only), the run
//      back to running, its claim's status_version re-recorded to the task's current version (the
//      failure blocked the task and bumped it), and the hold marks the retry re-admitted.
// The ordinary finalization (passed in `finalize`, or the reconciler's finalization sweep) then
// commits the same run with its saved result; the hold resolves in that commit; no provider turn
// and no wake. The lease keeps the stop-only intent until the release after the commit: a
// reusable sandbox is stopped and retained again, an ephemeral one destroyed only after the
// commit with the host-copy barrier (release-lease.ts).
import { randomUUID } from "node:crypto";
import { Prisma, withTransaction, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import { DomainError, isDomainError, messageOf, notFound } from "../../errors";
import { readmitFinalization } from "../../records/coordinator";
import { finalizationLockKey } from "../../finalization/finalization-owner";
import { finalizeRun, type FinalizeOutcome, type FinalizeRunDeps } from "../../finalization/finalize-run";
import { leaseOutcomeAfterFinalize } from "../../finalization/finalize-outcome-policy";
import { loadPreparedWorkspace } from "../../finalization/workspace-descriptor";
import { CLEANUP_CLAIM_MS } from "../../leases/lease-cleanup";
import {
  confirmedStopReceipt,
  LEASE_METADATA_KEYS,
  readIdentity,
  readStopIntent,
  readWorkspaceSentinel,
  verifyWorkspaceSentinel,
  type SandboxIdentityRecord,
  type WorkspaceSentinel,
} from "../../leases/lease-metadata";
import type { LeaseProviderRegistry, LeaseReleaseOutcome, LeaseRow } from "../../leases/lease-types";
import { pluginForLease } from "../../leases/plugin-for-lease";
import { releaseLeaseByPolicy, stopAndRetain } from "../../leases/release-lease";
import { recordExportRetryIntent } from "../../leases/stop-intent";
import { patchLease } from "../../leases/transition-lease";
import { hasCapability } from "../../providers/registry";
import type { EnvironmentProvider, LeaseHandle } from "../../providers/types";
import { recordActivity, type Actor } from "../../records/record-activity";
import { recordRunEvent } from "../../records/run-log";
import { readExportRetryExhaustedEvidence } from "../../records/actions";
import { readExportRetry, recordExportRetryRequested, recordExportRetryState } from "../../records/actions-export-retry";
import { loadRunBinding } from "../../finalization/binding";
import { decideExportRetry, type ExportRetrySnapshot } from "../policies/decide-export-retry";
import { readDiscardIntent } from "../../sandboxes/discard-intent";

/** R-EX-2: the body of the request, shared by the REST route, the tRPC procedure and the CLI. */
export const retryWorkspaceExportBody = z.strictObject({
  actionId: z.uuid(),
  runId: z.uuid(),
  repairNote: z.string().trim().min(1).max(20_000),
});
export type RetryWorkspaceExportBody = z.infer<typeof retryWorkspaceExportBody>;

export interface RetryWorkspaceExportInput extends RetryWorkspaceExportBody {
  companyId: string;
  issueId: string;
  actor: Actor;
}

export interface RetryWorkspaceExportDeps {
  db: PrismaClient;
  /** The provider plugins of this process; the lease's recorded plugin must be among them (R-EX-6). */
  registry: LeaseProviderRegistry;
  /**
   * When given, the re-admitted run is finalized here at once (the same finalizeRun as the live
   * path and the sweep) and its lease released by policy; otherwise the reconciler's
   * finalization sweep does it.
   */
  finalize?: FinalizeRunDeps;
}

export interface RetryWorkspaceExportResult {
  actionId: string;
  runId: string;
  leaseId: string;
  requestId: string;
  /** readmitted: this call re-admitted the run; already_requested: a duplicate (nothing written). */
  status: "readmitted" | "already_requested";
  /** The duplicate's state: still resuming elsewhere, or already re-admitted. */
  retryState: "resuming" | "readmitted";
  /** The finalization this call ran (with `finalize` only). */
  finalization: { outcome: FinalizeOutcome["kind"]; lease: LeaseReleaseOutcome["kind"] | null } | null;
}

/** Who holds the lease's cleanup claim while this retry resumes it (R-EX-5). */
export const exportRetryClaimOf = (actionId: string) => ({ by: `export-retry:${actionId}`, forMs: CLEANUP_CLAIM_MS });

export async function retryWorkspaceExport(deps: RetryWorkspaceExportDeps, rawInput: RetryWorkspaceExportInput): Promise<RetryWorkspaceExportResult> {
  const body = retryWorkspaceExportBody.safeParse({ actionId: rawInput.actionId, runId: rawInput.runId, repairNote: rawInput.repairNote });
  if (!body.success) throw new DomainError("invalid", "invalid_request", `The export-only retry request is invalid: ${z.prettifyError(body.error)}`);
  const input = { ...rawInput, ...body.data };
  const { db } = deps;

  // 1. The probe of the exact sandbox, before any lock (provider I/O never runs under row locks).
  const action = await db.issueRecoveryAction.findFirst({
    where: { id: input.actionId, companyId: input.companyId, issueId: input.issueId },
    select: { id: true, leaseId: true, evidence: true },
  });
  if (!action) throw notFound("The recovery action");
  const leaseRow = action.leaseId ? await db.environmentLease.findFirst({ where: { id: action.leaseId, companyId: input.companyId } }) : null;
  const plugin = leaseRow ? pluginForLease(deps.registry, leaseRow) : null;
  // A request the policy will answer as a duplicate (in flight, or re-admitted and not held again)
  // needs no provider call; a run held again after its re-admission is probed like a first one.
  const duplicate = readExportRetry(action.evidence);
  const phase = (await db.nativeRunFinalization.findUnique({ where: { runId: input.runId }, select: { phase: true } }))?.phase;
  const inFlight =
    duplicate?.state === "resuming" && leaseRow?.status === "pending_cleanup" && (() => {
      const intent = readStopIntent(leaseRow.metadata, leaseRow);
      return intent.kind === "present" && intent.value.requestId === duplicate.requestId;
    })();
  const answeredAsDuplicate = inFlight || (duplicate?.state === "readmitted" && phase !== "terminal_failure");
  const sandbox =
    leaseRow && plugin?.kind === "found" && !answeredAsDuplicate ? await probeSandbox(plugin.plugin, leaseRow) : ({ kind: "not_probed" } as const);

  // 2. Admission: nothing is written unless it admits.
  const admitted = await withTransaction(db, async (tx) => {
    const snapshot = await loadSnapshot(tx, deps.registry, input, "admit", sandbox);
    const decision = decideExportRetry(snapshot.policy);
    if (decision.kind === "reject") throw refusal(decision.code, decision.status, decision.message, input);
    if (decision.kind === "already_requested") {
      return { kind: "duplicate" as const, requestId: decision.requestId, state: decision.state, leaseId: snapshot.lease?.id ?? "" };
    }
    const lease = snapshot.lease as LeaseRow;
    const requestId = randomUUID();
    // R-EX-5: the stop-only intent on that exact lease, and the old stopped receipt removed, BEFORE the resume.
    const intent = await recordExportRetryIntent(tx, { lease, providerLeaseId: lease.providerLeaseId as string, requestId, claim: exportRetryClaimOf(input.actionId) });
    if (!intent) throw refusal("lease_changed", 409, "The lease changed during the admission.", input);
    await recordExportRetryRequested(tx, { actionId: input.actionId, requestId, repairNote: input.repairNote, actor: input.actor });
    await recordActivity(tx, {
      companyId: input.companyId,
      actor: input.actor,
      action: "recovery.export_retry_requested",
      entityType: "issue_recovery_action",
      entityId: input.actionId,
      details: { issueId: input.issueId, runId: input.runId, leaseId: lease.id, requestId, repairNote: input.repairNote },
    });
    await recordRunEvent(tx, {
      companyId: input.companyId,
      runId: input.runId,
      level: "info",
      code: "workspace.export_retry_requested",
      message: "An operator requested the export-only retry; the retained sandbox is resumed and verified before the same run copies its saved result.",
      payload: { actionId: input.actionId, leaseId: lease.id, requestId },
    });
    return { kind: "admitted" as const, requestId, lease: { ...lease, metadata: { ...(lease.metadata as object), [LEASE_METADATA_KEYS.stopIntent]: intent } } };
  });
  if (admitted.kind === "duplicate") {
    return { actionId: input.actionId, runId: input.runId, leaseId: admitted.leaseId, requestId: admitted.requestId, status: "already_requested", retryState: admitted.state, finalization: null };
  }

  // 3. The verified lifecycle of the recorded lease.
  const lease = admitted.lease as LeaseRow;
  const lifecycle = await resumeVerified(deps, lease);
  if (lifecycle.kind === "failed") {
    await stopAgain(deps, input, admitted.requestId, lease.id, lifecycle.code, lifecycle.message);
    throw new DomainError(lifecycle.status === 503 ? "unavailable" : "conflict", lifecycle.code, lifecycle.message, {
      actionId: input.actionId,
      runId: input.runId,
      leaseId: lease.id,
    });
  }

  // 4. Re-admission under finalization ownership.
  try {
    await withTransaction(db, async (tx) => {
      const snapshot = await loadSnapshot(tx, deps.registry, input, "readmit", lifecycle.inspection, admitted.requestId);
      const decision = decideExportRetry(snapshot.policy);
      if (decision.kind !== "admit") {
        throw refusal(decision.kind === "reject" ? decision.code : "retry_intent_changed", 409, decision.kind === "reject" ? decision.message : "The retry changed during the resume.", input);
      }
      const readmitted = await readmitFinalization(tx, {
        runId: input.runId,
        resultId: decision.resultId,
        readmission: { by: "export_retry", actionId: input.actionId, requestId: admitted.requestId, at: new Date().toISOString() },
      });
      if (!readmitted) throw refusal("phase_not_resumable", 409, "The coordinator left terminal_failure during the retry.", input);
      await reopenRun(tx, input.runId, snapshot.issueStatusVersion);
      // The retry's claim is given back, and the cleanup sweep's next look is put off by a claim's
      // length: the run's own release after its commit stops (or destroys) the sandbox by the
      // intent, and a restarted controller's sweep still finds it if that never happens (R-EX-5).
      await tx.$executeRaw`
        UPDATE environment_leases
        SET cleanup_claimed_by = NULL, cleanup_claimed_until = NULL,
            next_cleanup_at = now() + ${CLEANUP_CLAIM_MS}::double precision * interval '1 millisecond', updated_at = now()
        WHERE id = ${lease.id}::uuid AND status = 'pending_cleanup'::lease_status AND cleanup_claimed_by = ${exportRetryClaimOf(input.actionId).by}`;
      await recordExportRetryState(tx, { actionId: input.actionId, requestId: admitted.requestId, state: "readmitted" });
      await recordActivity(tx, {
        companyId: input.companyId,
        actor: input.actor,
        action: "recovery.export_retry_readmitted",
        entityType: "issue_recovery_action",
        entityId: input.actionId,
        details: { issueId: input.issueId, runId: input.runId, leaseId: lease.id, requestId: admitted.requestId },
      });
      await recordRunEvent(tx, {
        companyId: input.companyId,
        runId: input.runId,
        level: "info",
        code: "workspace.export_retry_readmitted",
        message: "The retained sandbox was resumed and verified (workspace identity and sentinel); the same run copies its saved result again. No agent turn is started.",
        payload: { actionId: input.actionId, leaseId: lease.id, requestId: admitted.requestId },
      });
    });
  } catch (error) {
    // A changed admission: the sandbox is stopped and retained again, nothing is re-admitted.
    const code = isDomainError(error) ? error.code : "export_retry_readmission_failed";
    await stopAgain(deps, input, admitted.requestId, lease.id, code, error instanceof Error ? error.message : String(error));
    throw error;
  }

  let finalization: RetryWorkspaceExportResult["finalization"] = null;
  if (deps.finalize) {
    const outcome = await finalizeRun(deps.finalize, { runId: input.runId });
    const leaseOutcome = leaseOutcomeAfterFinalize(outcome);
    const released = leaseOutcome ? await releaseLeaseByPolicy(db, deps.registry, { leaseId: lease.id, runId: input.runId, outcome: leaseOutcome }) : null;
    finalization = { outcome: outcome.kind, lease: released?.kind ?? null };
  }
  return { actionId: input.actionId, runId: input.runId, leaseId: lease.id, requestId: admitted.requestId, status: "readmitted", retryState: "readmitted", finalization };
}

function refusal(code: string, status: 409 | 422, message: string, input: { actionId: string; runId: string }): DomainError {
  return new DomainError(status === 422 ? "invalid" : "conflict", code, message, { actionId: input.actionId, runId: input.runId });
}

type SandboxProbe = ExportRetrySnapshot["sandbox"];

function identityOf(lease: LeaseRow): SandboxIdentityRecord | null {
  const read = readIdentity(lease.metadata);
  return read.kind === "present" && read.value.providerLeaseId === lease.providerLeaseId ? read.value : null;
}

function handleOf(lease: LeaseRow): LeaseHandle {
  return { leaseId: lease.id, pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId as string };
}

/** What the pinned plugin's inspect says of the exact sandbox, against the identity recorded at acquisition. */
async function probeSandbox(plugin: EnvironmentProvider, lease: LeaseRow): Promise<SandboxProbe> {
  const identity = identityOf(lease);
  if (!identity || !lease.providerLeaseId || !hasCapability(plugin, "inspect")) return { kind: "not_probed" };
  try {
    const inspection = await plugin.inspect(handleOf(lease));
    const matches = inspection.identity?.providerLeaseId === identity.providerLeaseId && inspection.identity.fingerprint === identity.fingerprint;
    return { kind: "inspected", state: inspection.state, identityMatches: matches };
  } catch (error) {
    return { kind: "probe_failed", message: error instanceof Error ? error.message : String(error) };
  }
}

/** Loads the admission snapshot under the run's advisory lock and row locks (run, issue, coordinator, action, lease). */
async function loadSnapshot(
  tx: TransactionClient,
  registry: LeaseProviderRegistry,
  input: RetryWorkspaceExportInput,
  stage: "admit" | "readmit",
  sandbox: SandboxProbe,
  requestId?: string,
): Promise<{ policy: ExportRetrySnapshot; lease: LeaseRow | null; issueStatusVersion: number | null }> {
  const [lock] = await tx.$queryRaw<{ locked: boolean }[]>`
    SELECT pg_try_advisory_xact_lock(hashtextextended(${finalizationLockKey(input.companyId, input.runId)}, 0)) AS locked`;
  const binding = await loadRunBinding(tx, { companyId: input.companyId, runId: input.runId });
  const [actionRow] = await tx.$queryRaw<{ id: string; cause: string; status: string; run_id: string | null; lease_id: string | null; evidence: unknown }[]>`
    SELECT id, cause, status, run_id, lease_id, evidence FROM issue_recovery_actions
    WHERE id = ${input.actionId}::uuid AND company_id = ${input.companyId}::uuid AND issue_id = ${input.issueId}::uuid FOR UPDATE`;
  if (!actionRow) throw notFound("The recovery action");
  const evidence = readExportRetryExhaustedEvidence(actionRow.evidence);
  const retry = readExportRetry(actionRow.evidence);
  const leaseLocked = actionRow.lease_id
    ? await tx.$queryRaw<{ id: string }[]>`SELECT id FROM environment_leases WHERE id = ${actionRow.lease_id}::uuid AND company_id = ${input.companyId}::uuid FOR UPDATE`
    : [];
  const lease = leaseLocked.length === 1 ? await tx.environmentLease.findUniqueOrThrow({ where: { id: actionRow.lease_id as string } }) : null;
  const coordinator = await tx.nativeRunFinalization.findUnique({ where: { runId: input.runId }, select: { failureCode: true } });
  const issue = binding.issue ? await tx.issue.findUnique({ where: { id: binding.issue.id }, select: { statusVersion: true } }) : null;

  let descriptorLeaseId: string | null = null;
  if (binding.run) {
    try {
      descriptorLeaseId = (await loadPreparedWorkspace(tx, { companyId: input.companyId, runId: input.runId, issueId: binding.run.issueId })).leaseId;
    } catch (error) {
      if (!isDomainError(error)) throw error;
    }
  }
  const competing = lease
    ? await tx.environmentLease.findMany({
        where: {
          id: { not: lease.id },
          status: { in: ["active", "pending_cleanup", "released"] },
          OR: [
            ...(lease.providerLeaseId ? [{ pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId }] : []),
            { runId: input.runId, status: { in: ["active", "pending_cleanup"] } },
          ],
        },
        select: { id: true },
        take: 10,
      })
    : [];
  const runRow = binding.run ? await tx.heartbeatRun.findUnique({ where: { id: input.runId }, select: { createdAt: true } }) : null;
  const newer =
    binding.run && runRow
      ? await tx.heartbeatRun.findMany({
          where: { companyId: input.companyId, nativeIssueId: binding.run.issueId, id: { not: input.runId }, createdAt: { gt: runRow.createdAt } },
          select: { id: true },
          take: 10,
        })
      : [];

  const lookup = lease ? pluginForLease(registry, lease) : null;
  const identity = lease ? identityOf(lease) : null;
  const sentinel =
    lease && identity && lease.runId
      ? verifyWorkspaceSentinel(lease.metadata, { leaseId: lease.id, pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId, runId: lease.runId, fingerprint: identity.fingerprint }).kind
      : "missing";
  const intent = lease ? readStopIntent(lease.metadata, lease) : null;
  const policy: ExportRetrySnapshot = {
    stage,
    request: { runId: input.runId, actionId: input.actionId },
    action: {
      cause: actionRow.cause,
      status: actionRow.status,
      runId: actionRow.run_id,
      leaseId: actionRow.lease_id,
      evidence: evidence ? { resultId: evidence.resultId, leaseId: evidence.leaseId, providerLeaseId: evidence.providerLeaseId, pluginId: evidence.pluginId } : null,
      retry: retry ? { requestId: retry.requestId, state: retry.state } : null,
    },
    lockAcquired: lock?.locked === true,
    binding,
    failureCode: coordinator?.failureCode ?? null,
    descriptorLeaseId,
    lease: lease
      ? {
          id: lease.id,
          companyId: lease.companyId,
          runId: lease.runId,
          pluginId: lease.pluginId,
          providerLeaseId: lease.providerLeaseId,
          status: lease.status,
          policy: lease.leasePolicy,
          receipt: confirmedStopReceipt(lease.metadata, lease).kind,
          sentinel: sentinel === "valid" ? "valid" : sentinel,
          identityRecorded: identity !== null,
          retryIntentHeld: intent?.kind === "present" && intent.value.requestId === (requestId ?? retry?.requestId),
          discarding: readDiscardIntent(lease.metadata).kind !== "absent",
        }
      : null,
    competingLeaseIds: competing.map((c) => c.id),
    newerRunIds: newer.map((n) => n.id),
    plugin:
      lookup === null
        ? { kind: "unavailable", message: "The hold names no lease." }
        : lookup.kind === "found"
          ? {
              kind: "found",
              stop: hasCapability(lookup.plugin, "environmentStopLease"),
              resume: hasCapability(lookup.plugin, "resume"),
              inspect: hasCapability(lookup.plugin, "inspect"),
              sentinel: hasCapability(lookup.plugin, "workspaceSentinel"),
            }
          : { kind: "unavailable", message: lookup.message },
    sandbox,
  };
  return { policy, lease, issueStatusVersion: issue?.statusVersion ?? null };
}

type Lifecycle =
  | { kind: "verified"; inspection: SandboxProbe }
  | { kind: "failed"; code: string; status: 409 | 503; message: string };

/** Same document as the lease's sentinel, field for field (the nonce included). */
function sameSentinel(a: WorkspaceSentinel | null, b: unknown): boolean {
  if (!a || typeof b !== "object" || b === null) return false;
  const o = b as Record<string, unknown>;
  return (Object.keys(a) as (keyof WorkspaceSentinel)[]).every((key) => o[key] === a[key]) && Object.keys(o).length === Object.keys(a).length;
}

/**
 * R-EX-3, R-DT-2: the verified lifecycle of the recorded lease. The sentinel is compared while
 * the sandbox is still stopped; the plugin's resume drains, verifies the identity and reopens
 * admission; the exact workspace is probed again afterwards.
 */
async function resumeVerified(deps: RetryWorkspaceExportDeps, lease: LeaseRow): Promise<Lifecycle> {
  const lookup = pluginForLease(deps.registry, lease);
  const identity = identityOf(lease);
  if (lookup.kind !== "found" || !identity || !hasCapability(lookup.plugin, "resume") || !hasCapability(lookup.plugin, "inspect")) {
    return { kind: "failed", code: "provider_plugin_unavailable", status: 503, message: "The lease's plugin cannot resume its sandbox here." };
  }
  const plugin = lookup.plugin;
  const handle = handleOf(lease);
  const recorded = readWorkspaceSentinel(lease.metadata);
  const needsSentinel = lease.leasePolicy === "ephemeral";
  const readSentinel = async (): Promise<Lifecycle | null> => {
    if (!needsSentinel) return null;
    if (!hasCapability(plugin, "workspaceSentinel")) return { kind: "failed", code: "provider_capability_missing", status: 409, message: "The plugin cannot read the sandbox's sentinel." };
    let inSandbox: unknown;
    try {
      inSandbox = await plugin.readWorkspaceSentinel(handle);
    } catch (error) {
      return { kind: "failed", code: "export_retry_probe_failed", status: 503, message: `The sandbox's sentinel could not be read: ${messageOf(error)}` };
    }
    if (!sameSentinel(recorded.kind === "present" ? recorded.value : null, inSandbox)) {
      return { kind: "failed", code: "export_retry_sentinel_mismatch", status: 409, message: "The sandbox does not hold the lease's acquisition-time sentinel: it is not the original allocation." };
    }
    return null;
  };

  const before = await readSentinel();
  if (before) return before;
  try {
    const resumed = await plugin.resume(handle, identity);
    if (resumed.providerLeaseId !== identity.providerLeaseId || resumed.fingerprint !== identity.fingerprint) {
      return { kind: "failed", code: "export_retry_sandbox_replaced", status: 409, message: "The resumed sandbox is not the one recorded on the lease." };
    }
  } catch (error) {
    const code = isDomainError(error) && error.code === "provider_identity_mismatch" ? "export_retry_sandbox_replaced" : "export_retry_resume_failed";
    return { kind: "failed", code, status: code === "export_retry_sandbox_replaced" ? 409 : 503, message: `The sandbox could not be resumed: ${messageOf(error)}` };
  }
  const inspection = await probeSandbox(plugin, lease);
  if (inspection.kind !== "inspected") {
    return { kind: "failed", code: "export_retry_probe_failed", status: 503, message: inspection.kind === "probe_failed" ? `The resumed sandbox could not be inspected: ${inspection.message}` : "The resumed sandbox could not be inspected." };
  }
  const after = await readSentinel();
  if (after) return after;
  return { kind: "verified", inspection };
}

/**
 * R-EX-5: stops and retains the sandbox again by this retry's recorded intent (same request id),
 * and marks the retry failed on the hold. The retry's own claim is given back first so the stop
 * can take it; a failed or unconfirmed stop stays pending_cleanup for the restart sweep.
 */
async function stopAgain(deps: RetryWorkspaceExportDeps, input: RetryWorkspaceExportInput, requestId: string, leaseId: string, code: string, message: string): Promise<LeaseReleaseOutcome | null> {
  const { db } = deps;
  const claim = exportRetryClaimOf(input.actionId);
  await db.$executeRaw(Prisma.sql`
    UPDATE environment_leases SET cleanup_claimed_by = NULL, cleanup_claimed_until = NULL, updated_at = now()
    WHERE id = ${leaseId}::uuid AND status = 'pending_cleanup'::lease_status AND cleanup_claimed_by = ${claim.by}`);
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

/**
 * The run goes back to running for its finalization: no error, not finished, and its claim's
 * status_version re-recorded to the task's current version (the failure blocked the task and
 * bumped it, so the status arbiter would otherwise keep the status: status_changed_since_claim).
 */
async function reopenRun(tx: TransactionClient, runId: string, statusVersion: number | null): Promise<void> {
  if (statusVersion === null) throw new DomainError("conflict", "run_not_found", "The run's task was not found.");
  const reopened = await tx.$executeRaw`
    UPDATE heartbeat_runs
    SET status = 'running'::run_status, error_code = NULL, error_message = NULL, finished_at = NULL,
        runner_profile_json = jsonb_set(runner_profile_json, '{nativeClaim,statusVersion}', to_jsonb(${statusVersion}::int)),
        updated_at = now()
    WHERE id = ${runId}::uuid AND status = 'failed'::run_status AND runner_profile_json ? 'nativeClaim'`;
  if (reopened !== 1) throw new DomainError("conflict", "run_not_running", "The run cannot be reopened (it changed, or it never claimed its task).");
}
