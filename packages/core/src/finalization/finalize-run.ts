// finalizeRun: the happy-path finalization of a native run whose result was accepted (issue 5,
// DESIGN.md section 3). In order:
//   1. ownership (finalization-owner.ts): the advisory lock on a dedicated connection and the
//      owner receipt; busy -> { kind: "busy" }, nothing written (R-OWN-1, R-OWN-2);
//   2. under ownership, the coordinator and the barrier are read again (R-OWN-3, R-OWN-4):
//      committed -> nothing to do; barrier present -> straight to arbitration;
//   3. copyback: coordinator -> workspace_finalizing, a `workspace_finalize` operation, export
//      through the lease's pinned plugin (R-EX-6; its delta export where it offers one, else or
//      when the host refuses the delta the full export: export-for-merge.ts), validate / salvage /
//      omit (R-UA-2..4), extract
//      into a private staging directory, mergeSnapshot under the directory-merge lock (R-LK-6),
//      retried before host writes up to three attempts (R-RR-1);
//   4. the succeeded operation IS the barrier; coordinator -> arbitrating; then ONE transaction:
//      ownership re-checked (R-OWN-9), status arbiter, coordinator -> committed, run succeeded.
// Lease release by policy is the caller's (releaseLeaseByPolicy after this returns).
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { withTransaction, type Prisma, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { classifyCopybackFailure } from "../copyback/merge/classify";
import type { MergeConflict } from "../copyback/merge/errors";
import { mergeSnapshot } from "../copyback/merge/merge-snapshot";
import { runWithCopybackRetries, type CopybackRetryOptions } from "../copyback/merge/retries";
import type { MergeLockProvider, MergeOutcome } from "../copyback/merge/types";
import { DomainError, isDomainError, notFound } from "../errors";
import { isDatabaseFailure } from "../database-failure";
import type { ProcessIdentity } from "../process/process-identity";
import { readProcessIdentity } from "../process/read-process-identity";
import { requireCapability } from "../providers/registry";
import type { EnvironmentProvider, LeaseHandle } from "../providers/types";
import { pinLeaseForRecovery, type PinOutcome } from "../leases/stop-intent";
import { openCopybackFailedAction, openExportLimitAction, openExportRetryExhaustedAction, openOwnerUnverifiedAction, resolveOwnerHoldsOnCommit } from "../records/actions";
import { resolveExportRetryOnCommit } from "../records/actions-export-retry";
import { checkRunBinding, loadRunBinding } from "./binding";
import type { UnverifiedReason } from "../records/finalization-owner-receipt";
import { completeRun, failRunInTransaction } from "../runs/settle-run";
import { recordRunEvent, type RunEventEntry } from "../records/run-log";
import { closeInterruptedFinalizeOperations, errorCodeOf, finishWorkspaceOperation, startWorkspaceOperation } from "../records/workspace-operations";
import type { PreparedWorkspaceDescriptor } from "../workspace/prepared-descriptor";
import { advanceFinalization } from "../records/coordinator";
import type { FinalizationPhase } from "../records/coordinator-phases";
import { copybackProven } from "../records/copyback-proven";
import { exportTimeoutOf } from "./export-deadline";
import { EXPORT_OMITTED_MESSAGE, type ExportLimitDetail } from "./export-policy";
import { exportForMerge, type ExportReport } from "./export-for-merge";
import { decideExportLease } from "./export-lease-binding";
import { readDestroyIntent } from "../leases/lease-metadata";
import { FINALIZE_CHANGES_KEY, recordFinalizeChanges, type FinalizeChangesRecord } from "./finalize-changes";
import { recordPathChanges, type PathChanges } from "../workspace/path-history";
import {
  discardOwnerConnection,
  FINALIZATION_OWNERSHIP_LOST,
  openOwnerConnection,
  takeFinalizationOwnership,
  type FinalizationOwnership,
  type OwnershipAttempt,
  type OwnershipKey,
} from "./finalization-owner";
import { decideCommitRetry, decideCopybackFailure, decideFinalizeStart, transientFailuresOf, type NotFinalizableReason } from "./finalize-policy";
import { createStagingDir, removeStagingDir } from "./staging";
import { arbitrateRunResult, type ArbiterOutcome } from "../records/status-arbiter";
import { loadPreparedWorkspace } from "./workspace-descriptor";

/** What finalizeRun needs from the provider registry (ProviderRegistry fits as is). */
export interface ProviderLookup {
  forLease(lease: { pluginId: string; provider: string }): EnvironmentProvider;
}

export interface FinalizeRunDeps {
  db: PrismaClient;
  registry: ProviderLookup;
  instanceRoot: string;
  /** Directory-merge locks of this instance (copyback/locks DirectoryMergeLocks). */
  locks: MergeLockProvider;
  /** The application database, for the dedicated ownership connection (R-OWN-6). */
  databaseUrl: string;
  /** This controller process (R-OWN-7); read from /proc when omitted. */
  controller?: ProcessIdentity;
  now?: () => Date;
  /** Backoff of the in-process retries (tests pass a zero backoff). */
  retry?: Pick<CopybackRetryOptions, "backoffMs" | "sleep">;
  /**
   * How long one copyback try may spend exporting (provider calls and stream) before it is
   * aborted as a transient provider failure (export-deadline.ts); default 10 minutes.
   */
  exportTimeoutMs?: number;
}

export interface MergeCounts {
  written: number;
  deleted: number;
  unchanged: boolean;
}

export type FinalizeOutcome =
  | { kind: "committed"; barrier: "written" | "reused"; operationId: string; counts: MergeCounts | null; arbiter: ArbiterOutcome }
  /** R-UA-3: the export stayed unsafe after salvage; it was omitted and the accepted result committed. */
  | { kind: "omitted_export_committed"; operationId: string; arbiter: ArbiterOutcome }
  | { kind: "already_committed" }
  | { kind: "conflict"; operationId: string; conflicts: MergeConflict[] }
  | { kind: "retryable_failure"; operationId: string | null; code: string; nextAttemptAt: Date }
  | { kind: "terminal_failure"; operationId: string | null; code: string }
  /** R-OWN-2, R-OWN-8: another owner holds the run (the lock, or a live recorded controller); nothing was written. */
  | { kind: "busy"; reason: "lock_held" | "owner_alive" | "owner_receipt_changed" }
  /**
   * R-OWN-11, R-ORP-4: a leftover receipt nobody can prove stopped. The board-owned hold is open
   * (actionId); the run, its result and its lease are kept; no provider turn.
   */
  | { kind: "owner_unverified"; actionId: string; reason: UnverifiedReason }
  | { kind: "not_finalizable"; reason: NotFinalizableReason };

/**
 * The number of an attempt's staging directory `staging/<runId>-<n>`: how many `workspace_finalize`
 * operations the run has, this attempt's included (read in the transaction that opened it, under
 * ownership). Never the coordinator's attempt count: re-admission (an export-only retry) resets
 * that to 0, and a re-admitted attempt reusing an earlier attempt's name could have its fresh
 * staging removed by a leftover-staging sweep that judged the old one settled
 * (leftover-staging.ts: a new attempt is always higher). Operations are never deleted, so the
 * number only grows.
 */
async function stagingSequence(tx: TransactionClient, key: OwnershipKey): Promise<number> {
  return tx.workspaceOperation.count({ where: { companyId: key.companyId, runId: key.runId, issueId: key.issueId, phase: "workspace_finalize" } });
}

/** R-RW-4: the publication's repeated binding check refused (the task moved on before any host write). */
export const PUBLICATION_UNBOUND_CODE = "finalization_binding_changed";

/** The binding check's refusal code carried by a PUBLICATION_UNBOUND_CODE error, or "unknown". */
function bindingReasonOf(error: unknown): string {
  const reason = (error as { details?: { reason?: unknown } } | null)?.details?.reason;
  return typeof reason === "string" ? reason : "unknown";
}

/** At most this many conflicts are stored on the operation and the coordinator (the count is kept). */
const MAX_STORED_CONFLICTS = 200;

export async function finalizeRun(deps: FinalizeRunDeps, input: { runId: string }): Promise<FinalizeOutcome> {
  const exportTimeoutMs = exportTimeoutOf(deps.exportTimeoutMs);
  // Issue 14: the lock connection (R-OWN-6) is set up while the run is read, not after; it is
  // only a connection until takeFinalizationOwnership takes the lock on it.
  const connection = openOwnerConnection(deps.databaseUrl);
  let key: OwnershipKey;
  let controller: ProcessIdentity | null;
  try {
    const run = await deps.db.heartbeatRun.findUnique({
      where: { id: input.runId },
      select: { id: true, companyId: true, nativeIssueId: true, runtimeMode: true },
    });
    if (!run) throw notFound("Run");
    if (run.runtimeMode !== "native") {
      throw new DomainError("invalid", "run_not_native", "Only native runs finalize through the copyback coordinator.");
    }
    key = { companyId: run.companyId, runId: run.id, issueId: run.nativeIssueId };
    controller = deps.controller ?? (await readProcessIdentity(process.pid));
    if (!controller) {
      throw new DomainError("unavailable", "controller_identity_unknown", "This process's identity could not be read from /proc.");
    }
  } catch (error) {
    await discardOwnerConnection(connection);
    throw error;
  }
  const taken = await takeFinalizationOwnership({ db: deps.db, databaseUrl: deps.databaseUrl, controller, connection }, key);
  if (taken.kind === "busy") return { kind: "busy", reason: taken.reason };
  if (taken.kind === "owner_unverified") return holdUnverifiedOwner(deps.db, key, taken);
  if (taken.takeover !== "none") {
    await recordRunEvent(deps.db, {
      companyId: key.companyId,
      runId: key.runId,
      level: "info",
      code: "finalization.takeover",
      message:
        taken.takeover === "resume_same_boot"
          ? "This controller resumed the finalization it joined before (its receipt could not be cleared then)."
          : "The previous controller exited after its copyback finished (the success barrier exists); finalization continues.",
      payload: { reason: taken.takeover },
    });
  }
  try {
    return await new Finalization(deps, key, taken.ownership, exportTimeoutMs).run();
  } finally {
    // R-OWN-9: everything above (the copyback included) has been awaited before the token goes.
    await taken.ownership.release();
  }
}

class Finalization {
  private readonly now: () => Date;
  /** The removal of the current attempt's staging while its outcome is written (exportAndMerge). */
  private stagingCleanup: Promise<void> | null = null;

  constructor(
    private readonly deps: FinalizeRunDeps,
    private readonly key: OwnershipKey,
    private readonly ownership: FinalizationOwnership,
    private readonly exportTimeoutMs: number,
  ) {
    this.now = deps.now ?? (() => new Date());
  }

  async run(): Promise<FinalizeOutcome> {
    try {
      return await this.decideAndRun();
    } finally {
      // R-OWN-9: all of the copyback's work, its staging removal included, ends before the token goes.
      await this.joinStagingCleanup();
    }
  }

  private async decideAndRun(): Promise<FinalizeOutcome> {
    const { db } = this.deps;
    // R-OWN-3, R-OWN-4: read again under ownership, never from an earlier snapshot.
    // Two independent reads: side by side on the pool (one round trip of waiting, not two).
    const [coordinator, barrier] = await Promise.all([db.nativeRunFinalization.findUnique({ where: { runId: this.key.runId } }), copybackProven(db, this.key)]);
    const decision = decideFinalizeStart({
      phase: coordinator?.phase ?? null,
      resultId: coordinator?.resultId ?? null,
      nextAttemptAt: coordinator?.nextAttemptAt ?? null,
      barrier,
      now: this.now(),
    });
    switch (decision.kind) {
      case "already_committed":
        return { kind: "already_committed" };
      case "not_finalizable":
        return decision;
      case "arbitrate": {
        await this.owned((tx) => closeInterruptedFinalizeOperations(tx, this.key));
        const barrierOperation = await db.workspaceOperation.findFirstOrThrow({
          where: { ...this.key, phase: "workspace_finalize", status: "succeeded" },
          orderBy: { finishedAt: "desc" },
          select: { id: true },
        });
        return this.commit(decision.from, coordinator?.resultId as string, barrierOperation.id, { barrier: "reused", counts: null });
      }
      case "copyback":
        return this.copyback(decision.from, coordinator?.resultId as string);
    }
  }

  private async copyback(from: FinalizationPhase, resultId: string): Promise<FinalizeOutcome> {
    // The phase move, the attempt it counted and the attempt's `workspace_finalize` operation in
    // one transaction as this owner (one commit instead of three round trips and two commits):
    // an attempt never exists without its operation, nor an operation without its phase.
    const started = await this.owned(async (tx) => {
      await closeInterruptedFinalizeOperations(tx, this.key);
      const moved = await advanceFinalization(tx, { runId: this.key.runId, from: [from], to: "workspace_finalizing", patch: { attempt: "increment" } });
      if (!moved) return null;
      const { attempt } = await tx.nativeRunFinalization.findUniqueOrThrow({ where: { runId: this.key.runId }, select: { attempt: true } });
      const operationId = await startWorkspaceOperation(tx, { ...this.key, phase: "workspace_finalize", metadata: { attempt } });
      return { attempt, operationId, staging: await stagingSequence(tx, this.key) };
    });
    if (!started) return { kind: "not_finalizable", reason: "phase_changed" };
    const { attempt, operationId, staging } = started;
    let result: CopybackResult;
    try {
      result = await this.exportAndMerge(operationId, attempt, staging);
    } catch (error) {
      // Ownership lost mid-copy: nothing is written as this owner any more; the run is left to
      // the reconciler, which judges the receipt (R-OWN-8, R-OWN-11).
      if (isOwnershipLoss(error)) throw error;
      // The database failed under the copyback (a dropped connection, a restarting server): that
      // says nothing about the export, so no failure is recorded; the run is left to the
      // reconciler, which finds the attempt interrupted and copies again (torture suite, P2039).
      if (isDatabaseFailure(error)) throw error;
      return this.fail(operationId, attempt, error);
    }

    // The counts stay at the top level (older readers); `changes` names the paths (finalize-changes.ts).
    const metadata: Prisma.InputJsonObject =
      result.kind === "omitted"
        ? { attempt, written: 0, deleted: 0, unchanged: true, omitted: true, [FINALIZE_CHANGES_KEY]: recordFinalizeChanges([], []) }
        : { attempt, ...result.counts, stage: result.stage, ...(result.exported ? { export: result.exported } : {}), [FINALIZE_CHANGES_KEY]: result.changes };
    // The succeeded operation IS the barrier; recorded with the phase move and its run event,
    // as this owner (R-OWN-9: the lock connection answers and the token is still ours).
    await this.owned(async (tx) => {
      await finishWorkspaceOperation(tx, operationId, { status: "succeeded", metadata });
      if (result.kind === "merged") await recordPathChanges(tx, { companyId: this.key.companyId, operationId, ...result.paths });
      await advanceFinalization(tx, { runId: this.key.runId, from: ["workspace_finalizing"], to: "arbitrating" });
      if (result.kind === "omitted") {
        // R-UA-3: info level, no warning; R-UA-4: no host path or link target in it.
        await recordRunEvent(tx, this.event("info", "workspace_export_omitted", EXPORT_OMITTED_MESSAGE, {
          operationId,
          salvageTried: result.salvageTried,
          violationCodes: result.violationCodes,
        }));
      } else {
        const { written, deleted, unchanged } = result.counts;
        await recordRunEvent(tx, this.event("info", "workspace.merged", unchanged
          ? "The sandbox returned no changes; the host workspace was left as it is."
          : `Merged into the host workspace: ${written} written, ${deleted} deleted.`, { operationId, written, deleted, unchanged }));
      }
    });
    return this.commit("arbitrating", resultId, operationId, result.kind === "omitted" ? { omitted: true } : { barrier: "written", counts: result.counts });
  }

  private async exportAndMerge(operationId: string, attempt: number, stagingNumber: number): Promise<CopybackResult> {
    const { db } = this.deps;
    const descriptor = await loadPreparedWorkspace(db, this.key);
    const { plugin, lease } = await this.pinnedPlugin(descriptor);
    // Checked before the retry loop: a missing capability is permanent, not a provider hiccup.
    requireCapability(plugin, "exportWorkspace");
    // Issue 14: the attempt's informational run events (export started, exported, a delta
    // fallback) are written while the export and the merge go on instead of before them (each is
    // a round trip and a commit); their time is taken when they are made, so the log's order
    // stays. They are joined before the attempt's outcome is recorded: the barrier is never
    // written ahead of its own export events, and a failed write fails the attempt as before.
    const events = new PendingWrites();
    events.add(recordRunEvent(db, this.event("info", "workspace.export_started", "Exporting the sandbox workspace.", {
      operationId,
      attempt,
      leaseId: lease.leaseId,
    })));
    const staging = await createStagingDir(this.deps.instanceRoot, `${this.key.runId}-${stagingNumber}`);
    // Retry events are written while the backoff runs and awaited before this attempt settles.
    const retryEvents: Promise<void>[] = [];
    let merged = false;
    try {
      const result = await runWithCopybackRetries(
        async (tryNumber) => {
          const workDir = join(staging, `try-${tryNumber}`);
          await mkdir(workDir, { mode: 0o700 });
          let done = false;
          try {
            const once = await this.exportAndMergeOnce(plugin, lease, descriptor, workDir, tryNumber, events);
            done = true;
            return once;
          } finally {
            // A failed try's files go before the next try; a merged try's leftovers (the staging
            // directories its moved files lived in) go with the whole staging, below.
            if (!done) await removeStagingDir(workDir);
          }
        },
        {
          ...this.deps.retry,
          // R-RR-1: failures before host writes, logged and retried with a short backoff.
          onRetry: ({ attempt: failed, delayMs, error, failure }) => {
            retryEvents.push(
              recordRunEvent(db, this.event("warn", "workspace.copyback_retry", `Copyback attempt ${failed} failed before any host write (${failure.reason}); retrying.`, {
                operationId,
                try: failed,
                delayMs,
                reason: failure.reason,
                errorCode: errorCodeOf(error, "unclassified"),
              })),
            );
          },
        },
      );
      await events.join();
      merged = true;
      return result;
    } finally {
      await Promise.allSettled(retryEvents);
      await events.settle();
      // Issue 14: once the merge is done, the private staging is removed while the barrier and
      // the commit are written (its rmdir calls wait on the filesystem's journal, the commit on
      // the database); joined before ownership is released (run(), R-OWN-9). A failed attempt's
      // is removed before its failure is recorded.
      const cleanup = removeStagingDir(staging);
      cleanup.catch(() => undefined); // observed at once; joinStagingCleanup reads its outcome
      this.stagingCleanup = cleanup;
      if (!merged) await this.joinStagingCleanup();
    }
  }

  /** The staging removal started by exportAndMerge, awaited; a removal that fails is reported, never the copyback's failure. */
  private async joinStagingCleanup(): Promise<void> {
    const cleanup = this.stagingCleanup;
    this.stagingCleanup = null;
    if (cleanup === null) return;
    try {
      await cleanup;
    } catch (error) {
      // Private files of this attempt only: the host and the records are unaffected. The
      // leftover-staging sweep removes it once the run's coordinator settled.
      await recordRunEvent(this.deps.db, this.event("warn", "workspace.staging_cleanup_failed", "The copyback's private staging directory could not be removed.", {
        errorCode: errorCodeOf(error, "staging_cleanup_failed"),
      })).catch(() => undefined);
    }
  }

  private async exportAndMergeOnce(
    plugin: EnvironmentProvider,
    lease: LeaseHandle,
    descriptor: PreparedWorkspaceDescriptor,
    workDir: string,
    tryNumber: number,
    events: PendingWrites,
  ): Promise<CopybackResult> {
    // Issue 14: the delta export where the plugin offers it, else (or when the host refuses the
    // delta) the full export, in this try (export-for-merge.ts). The export deadline: a hung
    // provider or stream fails this try before any host write (provider_export_timeout,
    // transient: R-RR-1) instead of holding the ownership lock forever.
    const exported = await exportForMerge({
      plugin,
      lease,
      workDir,
      baseline: descriptor.baseline,
      exclude: descriptor.excludedPaths,
      timeoutMs: this.exportTimeoutMs,
      log: (level, code, message, payload) => {
        events.add(recordRunEvent(this.deps.db, this.event(level, code, message, { ...payload, try: tryNumber })));
        return Promise.resolve();
      },
    });
    if (exported.kind === "omitted") return exported;
    const outcome = await mergeSnapshot({
      target: descriptor.hostPath,
      baseline: descriptor.baseline,
      snapshotDir: exported.snapshotDir,
      // Hashed while the archive was received: the merge does not read staging again.
      snapshotManifest: exported.snapshotManifest,
      locks: this.deps.locks,
      exclude: descriptor.excludedPaths,
      consumeSnapshot: true,
      // R-OWN-9, R-LK-6: under the directory-merge lock, ownership is re-checked before the first
      // host write and again before publishing (also for an unchanged snapshot). R-RW-4: before the
      // first host write the binding check is repeated too (publication repeats the checks).
      hooks: {
        authorize: async () => {
          await this.ownership.assertHeld();
          await this.assertStillBound();
        },
        publish: () => this.ownership.assertHeld(),
      },
    });
    return {
      kind: "merged",
      stage: exported.stage,
      exported: exported.report,
      counts: countsOf(outcome),
      changes: outcome.kind === "unchanged" ? recordFinalizeChanges([], []) : recordFinalizeChanges(outcome.written, outcome.deleted),
      paths: {
        executionWorkspaceId: descriptor.executionWorkspaceId,
        written: outcome.kind === "unchanged" ? [] : outcome.written,
        deleted: outcome.kind === "unchanged" ? [] : outcome.deleted,
      },
    };
  }

  /**
   * R-RW-4: "publication repeats the checks". Right before the merge's first host write (under the
   * directory-merge lock, after the export), THE binding check (finalization/binding.ts) is asked again:
   * a task closed, reassigned or taken by a newer execution since the finalization was admitted
   * (live, or by attestation, takeover or export-only retry) never receives the run's old files.
   * The snapshot is read under short row locks in its own transaction, committed before any host
   * I/O (row locks are never held across copyback I/O). A refusal is final: nothing was written.
   */
  private async assertStillBound(): Promise<void> {
    const snapshot = await withTransaction(this.deps.db, (tx) => loadRunBinding(tx, this.key));
    const decision = checkRunBinding(snapshot, ["workspace_finalizing"]);
    if (decision.kind === "reject") {
      throw new DomainError("conflict", PUBLICATION_UNBOUND_CODE, `The run no longer owns its task; nothing was copied back: ${decision.message}`, { reason: decision.code });
    }
  }

  /**
   * R-EX-6: the exact plugin pinned on the prepared lease, and only while that lease is still
   * this run's seeded sandbox (export-lease-binding.ts): refused before any export, nothing staged.
   */
  private async pinnedPlugin(descriptor: PreparedWorkspaceDescriptor): Promise<{ plugin: EnvironmentProvider; lease: LeaseHandle }> {
    const row = await this.deps.db.environmentLease.findUnique({
      where: { id: descriptor.leaseId },
      select: { id: true, companyId: true, runId: true, pluginId: true, provider: true, providerLeaseId: true, status: true, metadata: true },
    });
    const binding = decideExportLease(row && { ...row, destroyIntent: readDestroyIntent(row.metadata, row).kind === "present" }, {
      companyId: this.key.companyId,
      runId: this.key.runId,
      leaseId: descriptor.leaseId,
      seededProviderLeaseId: descriptor.seed.providerLeaseId,
    });
    if (binding.kind === "refused") throw new DomainError("conflict", binding.code, binding.message, binding.details);
    const plugin = this.deps.registry.forLease({ pluginId: row!.pluginId, provider: row!.provider });
    return { plugin, lease: binding.handle };
  }

  private async fail(operationId: string, attempt: number, error: unknown): Promise<FinalizeOutcome> {
    // R-EX-1: the budget counts transient export failures recorded on the coordinator, not its
    // attempts (an interrupted attempt recorded none): finalize-policy.ts MAX_TRANSIENT_EXPORT_FAILURES.
    const { failureDetail } = await this.deps.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId: this.key.runId }, select: { failureDetail: true } });
    const decision = decideCopybackFailure(error, { failuresBefore: transientFailuresOf(failureDetail), now: this.now() });
    // R-RR-1's one classifier: whether the merge had begun changing host files when it failed.
    const hostWritesStarted = classifyCopybackFailure(error).reason === "after_host_writes";
    return this.owned(async (tx): Promise<FinalizeOutcome> => {
      if (decision.kind === "conflict") {
        const conflicts = decision.conflicts.slice(0, MAX_STORED_CONFLICTS);
        const detail = { conflicts: conflicts.map((c) => ({ ...c })), conflictCount: decision.conflicts.length };
        await finishWorkspaceOperation(tx, operationId, { status: "failed", errorCode: decision.code, metadata: { attempt, ...detail } });
        await advanceFinalization(tx, {
          runId: this.key.runId,
          from: ["workspace_finalizing"],
          to: "terminal_failure",
          patch: { failureCode: decision.code, failureDetail: detail },
        });
        // R-EX-4, R-UI-2: the accepted result cannot be applied: pinned and held with the failure.
        const held = await this.holdFailedCopyback(tx, {
          failure: "merge_conflict",
          failureCode: decision.code,
          hostWritesStarted: false,
          conflictCount: decision.conflicts.length,
          conflicts,
          bindingReason: null,
        });
        await recordRunEvent(tx, this.event("warn", "workspace.merge_conflict", `The sandbox's changes conflict with host changes (${decision.conflicts.length}); nothing was written.`, {
          operationId,
          conflictCount: decision.conflicts.length,
          actionId: held.actionId,
          leasePinned: held.pin,
        }));
        await this.endRunFailed(tx, decision.code, `The sandbox's changes conflict with host changes made since the run started (${decision.conflicts.length}); nothing was written.`);
        return { kind: "conflict", operationId, conflicts: decision.conflicts };
      }
      if (decision.kind === "exhausted") return this.exhaust(tx, operationId, decision);
      if (decision.kind === "terminal" && decision.detail) return this.holdAtLimit(tx, operationId, attempt, decision.code, decision.detail);
      await finishWorkspaceOperation(tx, operationId, { status: "failed", errorCode: decision.code, metadata: { attempt } });
      if (decision.kind === "retryable") {
        await advanceFinalization(tx, {
          runId: this.key.runId,
          from: ["workspace_finalizing"],
          to: "retryable_failure",
          patch: { failureCode: decision.code, failureDetail: { attempt, transientFailures: decision.failures }, nextAttemptAt: decision.nextAttemptAt },
        });
        await recordRunEvent(tx, this.event("warn", "workspace.copyback_failed", `The copyback failed before any host write (${decision.code}); it will be retried.`, {
          operationId,
          errorCode: decision.code,
          nextAttemptAt: decision.nextAttemptAt.toISOString(),
        }));
        return { kind: "retryable_failure", operationId, code: decision.code, nextAttemptAt: decision.nextAttemptAt };
      }
      // R-RW-4: the publication's binding check refused: the task moved on before any host write.
      const bindingReason = decision.code === PUBLICATION_UNBOUND_CODE ? bindingReasonOf(error) : null;
      await advanceFinalization(tx, {
        runId: this.key.runId,
        from: ["workspace_finalizing"],
        to: "terminal_failure",
        patch: { failureCode: decision.code, failureDetail: { attempt, ...decision.detail, ...(bindingReason ? { bindingReason } : {}) } },
      });
      // R-EX-4, R-UI-2: final, so the accepted result is not applied (and the host may hold part
      // of the run's files): the exact sandbox is pinned and the board's hold opens with the failure.
      const held = await this.holdFailedCopyback(tx, {
        failure: bindingReason ? "binding_changed" : "copyback_failed",
        failureCode: decision.code,
        hostWritesStarted,
        conflictCount: null,
        conflicts: [],
        bindingReason,
      });
      await recordRunEvent(tx, this.event("error", "workspace.copyback_failed", `The copyback failed (${decision.code}).`, {
        operationId,
        errorCode: decision.code,
        hostWritesStarted,
        actionId: held.actionId,
        leasePinned: held.pin,
      }));
      await this.endRunFailed(tx, decision.code, `The copyback failed (${decision.code}); the saved result and the sandbox are kept for an operator.`);
      return { kind: "terminal_failure", operationId, code: decision.code };
    });
  }

  /**
   * R-EX-4, R-UI-2: in the caller's transaction (the one that fails the run, as this owner): the
   * run's exact lease gets its stop-only intent (ephemeral included: no release or destroy may touch
   * its files) and the board-owned copyback-failed hold opens naming it. A crash can leave neither
   * without the other, nor the failure without both.
   */
  private async holdFailedCopyback(
    tx: TransactionClient,
    failure: Pick<Parameters<typeof openCopybackFailedAction>[1], "failure" | "failureCode" | "hostWritesStarted" | "conflictCount" | "conflicts" | "bindingReason">,
  ): Promise<{ actionId: string; pin: PinOutcome["kind"] }> {
    const { lease, resultId } = await this.leaseToPin(tx);
    const pinned = lease ? await pinLeaseForRecovery(tx, lease.id) : { kind: "nothing_to_pin" as const };
    const action = await openCopybackFailedAction(tx, {
      companyId: this.key.companyId,
      issueId: this.key.issueId,
      runId: this.key.runId,
      resultId,
      leaseId: lease?.id ?? null,
      providerLeaseId: lease?.providerLeaseId ?? null,
      pluginId: lease?.pluginId ?? null,
      pin: pinned.kind,
      ...failure,
    });
    return { actionId: action.actionId, pin: pinned.kind };
  }

  /**
   * The lease a terminal failure pins: the prepared descriptor's (the sandbox the export read), or,
   * when the descriptor itself cannot be read (a failure of its own), the run's newest lease, so a
   * broken descriptor never keeps the failure from being recorded. Only a lease still bound to this
   * run: one rebound to another run (finalization_lease_not_bound) holds that run's work and is
   * never stopped or held from here. With the coordinator's result.
   */
  private async leaseToPin(tx: TransactionClient): Promise<{ lease: { id: string; providerLeaseId: string | null; pluginId: string } | null; resultId: string | null }> {
    const select = { id: true, providerLeaseId: true, pluginId: true } as const;
    let leaseId: string | null = null;
    try {
      leaseId = (await loadPreparedWorkspace(tx, this.key)).leaseId;
    } catch (error) {
      if (!isDomainError(error)) throw error;
    }
    const lease = leaseId
      ? await tx.environmentLease.findFirst({ where: { id: leaseId, companyId: this.key.companyId, runId: this.key.runId }, select })
      : await tx.environmentLease.findFirst({ where: { runId: this.key.runId, companyId: this.key.companyId }, orderBy: { createdAt: "desc" }, select });
    const coordinator = await tx.nativeRunFinalization.findUniqueOrThrow({ where: { runId: this.key.runId }, select: { resultId: true } });
    return { lease, resultId: coordinator.resultId };
  }

  /**
   * R-EX-1, R-EX-4: the retry budget is spent. In this ONE transaction (as this owner): the
   * operation fails with the last attempt's code, the coordinator settles terminal, the exact
   * sandbox is pinned by a stop-only intent (ephemeral included: no release or destroy may touch
   * its files), the board's export-only-retry hold opens, and the run fails (task to people).
   * The accepted result stays as it is. The caller's release then stops and retains the sandbox
   * by that intent; after a crash the cleanup sweep does.
   */
  private async exhaust(
    tx: TransactionClient,
    operationId: string,
    decision: Extract<ReturnType<typeof decideCopybackFailure>, { kind: "exhausted" }>,
  ): Promise<FinalizeOutcome> {
    const descriptor = await loadPreparedWorkspace(tx, this.key);
    const lease = await tx.environmentLease.findUnique({
      where: { id: descriptor.leaseId },
      select: { id: true, providerLeaseId: true, pluginId: true },
    });
    const coordinator = await tx.nativeRunFinalization.findUniqueOrThrow({ where: { runId: this.key.runId }, select: { resultId: true } });
    await finishWorkspaceOperation(tx, operationId, { status: "failed", errorCode: decision.lastCode, metadata: { attempt: decision.attempts, exhausted: true } });
    await advanceFinalization(tx, {
      runId: this.key.runId,
      from: ["workspace_finalizing"],
      to: "terminal_failure",
      patch: { failureCode: decision.code, failureDetail: { attempts: decision.attempts, lastFailureCode: decision.lastCode } },
    });
    const pinned = lease ? await pinLeaseForRecovery(tx, lease.id) : { kind: "nothing_to_pin" as const, status: "missing" };
    const action = await openExportRetryExhaustedAction(tx, {
      companyId: this.key.companyId,
      issueId: this.key.issueId,
      runId: this.key.runId,
      resultId: coordinator.resultId,
      leaseId: lease?.id ?? null,
      providerLeaseId: lease?.providerLeaseId ?? null,
      pluginId: lease?.pluginId ?? null,
      attempts: decision.attempts,
      lastFailureCode: decision.lastCode,
    });
    await recordRunEvent(tx, this.event("error", "workspace.copyback_exhausted", `Copying the sandbox back failed ${decision.attempts} times (${decision.lastCode}, a transport or copyback failure); the saved result and the sandbox are kept for an export-only retry.`, {
      operationId,
      lastFailureCode: decision.lastCode,
      attempts: decision.attempts,
      actionId: action.actionId,
      leasePinned: pinned.kind,
    }));
    await this.endRunFailed(tx, decision.code, `Copying the sandbox's files back failed ${decision.attempts} times (${decision.lastCode}); the saved result and the sandbox are kept for an export-only retry.`);
    return { kind: "terminal_failure", operationId, code: decision.code };
  }

  /**
   * R-UA-3, R-UA-4: the archive crossed an entry or size limit, or has colliding paths. A second
   * export cannot change that and omitting it would drop every file of the task silently, so the
   * run is held instead, in this ONE transaction (as this owner): the operation fails with the
   * limit's code, the coordinator settles terminal with the limit named, the exact sandbox is
   * pinned by a stop-only intent (as for the spent retry budget, R-EX-4), the board's limit hold
   * opens naming the limit, and the run fails (task to people). The accepted result stays.
   */
  private async holdAtLimit(tx: TransactionClient, operationId: string, attempt: number, code: string, detail: ExportLimitDetail): Promise<FinalizeOutcome> {
    const descriptor = await loadPreparedWorkspace(tx, this.key);
    const lease = await tx.environmentLease.findUnique({ where: { id: descriptor.leaseId }, select: { id: true, providerLeaseId: true, pluginId: true } });
    const coordinator = await tx.nativeRunFinalization.findUniqueOrThrow({ where: { runId: this.key.runId }, select: { resultId: true } });
    await finishWorkspaceOperation(tx, operationId, { status: "failed", errorCode: code, metadata: { attempt } });
    await advanceFinalization(tx, {
      runId: this.key.runId,
      from: ["workspace_finalizing"],
      to: "terminal_failure",
      patch: { failureCode: code, failureDetail: { attempt, ...detail } },
    });
    const pinned = lease ? await pinLeaseForRecovery(tx, lease.id) : { kind: "nothing_to_pin" as const, status: "missing" };
    const action = await openExportLimitAction(tx, {
      companyId: this.key.companyId,
      issueId: this.key.issueId,
      runId: this.key.runId,
      resultId: coordinator.resultId,
      leaseId: lease?.id ?? null,
      providerLeaseId: lease?.providerLeaseId ?? null,
      pluginId: lease?.pluginId ?? null,
      failureCode: code,
      limit: { kind: detail.kind, violation: detail.violation, limit: detail.limit, max: detail.max, path: detail.path, violationCodes: detail.violationCodes },
    });
    await recordRunEvent(tx, this.event("error", "workspace.copyback_failed", `The copyback stopped at an archive limit (${code}); nothing was written or omitted, the saved result and the sandbox are kept for an operator.`, {
      operationId,
      errorCode: code,
      violation: detail.violation,
      limit: detail.limit,
      actionId: action.actionId,
      leasePinned: pinned.kind,
    }));
    await this.endRunFailed(tx, code, `The copyback stopped at an archive limit (${code}); the saved result and the sandbox are kept for an operator.`);
    return { kind: "terminal_failure", operationId, code };
  }

  /** Barrier present: arbitration, coordinator committed and the run succeeded, in one transaction. */
  private async commit(
    from: FinalizationPhase,
    resultId: string,
    operationId: string,
    how: { barrier: "written" | "reused"; counts: MergeCounts | null } | { omitted: true },
  ): Promise<FinalizeOutcome> {
    const { db } = this.deps;
    // A coordinator that still says result_accepted with a barrier present takes the legal path.
    const path: FinalizationPhase[] = from === "result_accepted" ? ["workspace_finalizing", "arbitrating"] : from === "arbitrating" ? [] : ["arbitrating"];
    let phase = from;
    for (const to of path) {
      const moved = await this.owned((tx) => advanceFinalization(tx, { runId: this.key.runId, from: [phase], to }));
      if (!moved) return { kind: "not_finalizable", reason: "phase_changed" };
      phase = to;
    }
    try {
      const arbiter = await withTransaction(db, async (tx) => {
        // R-OWN-9: publication checks the lock connection and the durable token.
        await this.ownership.assertPublishable(tx);
        const verdict = await arbitrateRunResult(tx, { runId: this.key.runId, resultId });
        if (!(await advanceFinalization(tx, { runId: this.key.runId, from: ["arbitrating"], to: "committed" }))) {
          throw new DomainError("conflict", "finalization_phase_changed", "The coordinator left arbitrating during the commit.");
        }
        await completeRun(tx, { runId: this.key.runId });
        // R-ORP-3: verified finalization clears the run's unverified-owner holds after commitment.
        await resolveOwnerHoldsOnCommit(tx, { companyId: this.key.companyId, runId: this.key.runId });
        // R-EX-2: an export-only retry's hold resolves with the same run's commit.
        await resolveExportRetryOnCommit(tx, { companyId: this.key.companyId, runId: this.key.runId });
        await recordRunEvent(tx, this.event("info", "run.committed", "Finalization committed: the files are on the host and the result is applied.", {
          operationId,
          omitted: "omitted" in how,
        }));
        return verdict;
      });
      return "omitted" in how
        ? { kind: "omitted_export_committed", operationId, arbiter }
        : { kind: "committed", barrier: how.barrier, operationId, counts: how.counts, arbiter };
    } catch (error) {
      if (isOwnershipLoss(error) || (isDomainError(error) && error.code === "finalization_phase_changed")) throw error;
      return this.failArbitration(operationId, error);
    }
  }

  /** The barrier stands; only the commit failed. A domain refusal is final, anything else is retried later. */
  private async failArbitration(operationId: string, error: unknown): Promise<FinalizeOutcome> {
    const code = errorCodeOf(error, "finalization_commit_failed");
    const { failureDetail } = await this.deps.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId: this.key.runId }, select: { failureDetail: true } });
    return this.owned(async (tx): Promise<FinalizeOutcome> => {
      if (isDomainError(error)) {
        await advanceFinalization(tx, { runId: this.key.runId, from: ["arbitrating"], to: "terminal_failure", patch: { failureCode: code } });
        // R-EX-4, R-UI-2: the files are on the host (the barrier stands) but the accepted result was
        // refused: pinned and held with the failure, through the same path as the other terminal failures.
        const barrier = await tx.workspaceOperation.findUnique({ where: { id: operationId }, select: { metadata: true } });
        const hostWritesStarted = barrierWroteHost(barrier?.metadata);
        const held = await this.holdFailedCopyback(tx, {
          failure: "result_refused",
          failureCode: code,
          hostWritesStarted,
          conflictCount: null,
          conflicts: [],
          bindingReason: null,
        });
        await recordRunEvent(tx, this.event("error", "finalization.commit_failed", `Applying the result failed (${code}).`, {
          errorCode: code,
          operationId,
          hostWritesStarted,
          actionId: held.actionId,
          leasePinned: held.pin,
        }));
        await this.endRunFailed(tx, code, `Applying the result to the task failed (${code}); the saved result and the sandbox are kept for an operator.`);
        return { kind: "terminal_failure", operationId: null, code };
      }
      const retry = decideCommitRetry(failureDetail, this.now());
      const nextAttemptAt = retry.nextAttemptAt;
      await advanceFinalization(tx, {
        runId: this.key.runId,
        from: ["arbitrating"],
        to: "retryable_failure",
        patch: { failureCode: code, failureDetail: retry.failureDetail as Prisma.InputJsonObject, nextAttemptAt },
      });
      await recordRunEvent(tx, this.event("warn", "finalization.commit_failed", `Applying the result failed (${code}); it will be retried.`, { errorCode: code }));
      return { kind: "retryable_failure", operationId: null, code, nextAttemptAt };
    });
  }

  /** A coordinator write made while owning: ownership is checked in the same transaction (R-OWN-9). */
  private owned<T>(fn: (tx: TransactionClient) => Promise<T>): Promise<T> {
    return withTransaction(this.deps.db, async (tx) => {
      await this.ownership.assertPublishable(tx);
      return fn(tx);
    });
  }

  /** A terminal coordinator ends its run in the same transaction: failed, code kept, task through the arbiter. */
  private async endRunFailed(tx: TransactionClient, code: string, message: string): Promise<void> {
    await failRunInTransaction(tx, { runId: this.key.runId, code, message });
  }

  private event(level: RunEventEntry["level"], code: string, message: string, payload: Prisma.InputJsonObject): RunEventEntry {
    return { companyId: this.key.companyId, runId: this.key.runId, level, code, message, payload };
  }
}

/**
 * Database writes started and not awaited at once (run events written while the copyback goes
 * on): `join` awaits them all and throws the first failure; `settle` awaits them and ignores
 * failures (a path that already fails for another reason). No write is left unawaited.
 */
class PendingWrites {
  private readonly writes: Promise<void>[] = [];

  add(write: Promise<void>): void {
    // Observed at once, so a failure that nobody joined yet is never an unhandled rejection.
    write.catch(() => undefined);
    this.writes.push(write);
  }

  async join(): Promise<void> {
    await Promise.all(this.writes);
  }

  async settle(): Promise<void> {
    await Promise.allSettled(this.writes);
  }
}

type CopybackResult =
  | {
      kind: "merged";
      stage: "primary" | "salvage";
      exported: ExportReport | null;
      counts: MergeCounts;
      changes: FinalizeChangesRecord;
      /** Every path written and deleted, for the workspace history (`changes` keeps the first 500). */
      paths: PathChanges;
    }
  | { kind: "omitted"; salvageTried: boolean; violationCodes: string[] };

/**
 * Whether the copyback whose success barrier this is changed host files: only a barrier that
 * recorded an unchanged (or omitted) copyback did not; an unreadable record counts as written, the
 * side that keeps the operator looking (R-EX-4).
 */
function barrierWroteHost(metadata: unknown): boolean {
  return !(typeof metadata === "object" && metadata !== null && (metadata as { unchanged?: unknown }).unchanged === true);
}

function countsOf(outcome: MergeOutcome): MergeCounts {
  return outcome.kind === "unchanged"
    ? { written: 0, deleted: 0, unchanged: true }
    : { written: outcome.written.length, deleted: outcome.deleted.length, unchanged: false };
}

/** True when the error (or a cause it wraps) says this process no longer owns the copyback. */
export function isOwnershipLoss(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if ((current as { code?: unknown }).code === FINALIZATION_OWNERSHIP_LOST) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * R-OWN-11, R-ORP-4: a leftover receipt that nobody can prove stopped becomes (or stays) the
 * board-owned unverified-owner hold. The run, its accepted result, its descriptor and its lease
 * are kept as they are (R-ORP-3); no provider turn, no automatic wake.
 */
async function holdUnverifiedOwner(
  db: PrismaClient,
  key: OwnershipKey,
  taken: Extract<OwnershipAttempt, { kind: "owner_unverified" }>,
): Promise<FinalizeOutcome> {
  const coordinator = await db.nativeRunFinalization.findUnique({ where: { runId: key.runId }, select: { phase: true, resultId: true } });
  const leases = await db.environmentLease.findMany({ where: { runId: key.runId, companyId: key.companyId }, select: { id: true }, orderBy: { createdAt: "asc" } });
  const opened = await withTransaction(db, async (tx) => {
    const action = await openOwnerUnverifiedAction(tx, {
      companyId: key.companyId,
      issueId: key.issueId,
      runId: key.runId,
      receipt: taken.receipt,
      reason: taken.reason,
      phase: coordinator?.phase ?? "unknown",
      resultId: coordinator?.resultId ?? null,
      leaseIds: leases.map((lease) => lease.id),
    });
    if (action.created) {
      await recordRunEvent(tx, {
        companyId: key.companyId,
        runId: key.runId,
        level: "warn",
        code: "finalization.owner_unverified",
        message: "An earlier copyback of this run may still be running and cannot be verified from here; an operator must confirm it stopped.",
        payload: { actionId: action.actionId, reason: taken.reason },
      });
    }
    return action;
  });
  return { kind: "owner_unverified", actionId: opened.actionId, reason: taken.reason };
}
