// One copyback attempt's files: the export through the lease's pinned plugin (R-EX-6; its delta
// export where it offers one, else or when the host refuses the delta the full export:
// export-for-merge.ts), validate / salvage / omit (R-UA-2..4), extract into a private staging
// directory, mergeSnapshot under the directory-merge lock (R-LK-6), retried before host writes up
// to three tries (R-RR-1). What the attempt's outcome writes is the caller's (finalize-run.ts).
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { mergeSnapshot } from "../copyback/merge/merge-snapshot";
import { runWithCopybackRetries } from "../copyback/merge/retries";
import type { MergeOutcome } from "../copyback/merge/types";
import { DomainError } from "../errors";
import { readDestroyIntent } from "../leases/lease-metadata";
import { requireCapability } from "../providers/registry";
import type { EnvironmentProvider, LeaseHandle } from "../providers/types";
import { recordRunEvent } from "../records/run-log";
import { errorCodeOf } from "../records/workspace-operations";
import type { PathChanges } from "../workspace/path-history";
import type { PreparedWorkspaceDescriptor } from "../workspace/prepared-descriptor";
import { exportForMerge, type ExportReport } from "./export-for-merge";
import { decideExportLease } from "./export-lease-binding";
import type { OwnedFinalization } from "./finalization-context";
import { recordFinalizeChanges, type FinalizeChangesRecord } from "./finalize-changes";
import { resumeForExport, type ResumedForExport } from "./resume-for-export";
import type { MergeCounts } from "./finalize-outcome";
import { PendingWrites } from "./pending-writes";
import { assertStillBound } from "./publication-binding-check";
import { createStagingDir, removeStagingDir } from "./staging";
import { loadPreparedWorkspace } from "./workspace-descriptor";

export type CopybackResult =
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
 * The attempt's staging is `staging/<runId>-<stagingNumber>`. Once the merge is done it is removed
 * while the barrier and the commit are written (f.staging, joined before ownership is released,
 * R-OWN-9); a failed attempt's is removed before its failure is recorded.
 */
export async function exportAndMerge(f: OwnedFinalization, operationId: string, attempt: number, stagingNumber: number): Promise<CopybackResult> {
  const { db } = f.deps;
  const descriptor = await loadPreparedWorkspace(db, f.key);
  const { plugin, lease } = await pinnedPlugin(f, descriptor);
  // Checked before the retry loop: a missing capability is permanent, not a provider hiccup.
  requireCapability(plugin, "exportWorkspace");
  // The attempt's informational run events (export started, exported, a delta fallback) are
  // written while the export and the merge go on instead of before them (each is a round trip
  // and a commit); their time is taken when they are made, so the log's order stays. They are
  // joined before the attempt's outcome is recorded: the barrier is never written ahead of its
  // own export events, and a failed write fails the attempt as before.
  const events = new PendingWrites();
  events.add(recordRunEvent(db, f.event("info", "workspace.export_started", "Exporting the sandbox workspace.", {
    operationId,
    attempt,
    leaseId: lease.leaseId,
  })));
  const staging = await createStagingDir(f.deps.instanceRoot, `${f.key.runId}-${stagingNumber}`);
  // Retry events are written while the backoff runs and awaited before this attempt settles.
  const retryEvents: Promise<void>[] = [];
  let merged = false;
  let resumed: ResumedForExport | null = null;
  try {
    // R-EX-1, R-EX-5: a sandbox an earlier failure stopped, on a plugin that cannot export it
    // stopped (Daytona), is resumed and verified first under a stop-only intent (resume-for-export.ts).
    resumed = await resumeForExport(f, plugin, lease.leaseId);
    const result = await runWithCopybackRetries(
      async (tryNumber) => {
        const workDir = join(staging, `try-${tryNumber}`);
        await mkdir(workDir, { mode: 0o700 });
        let done = false;
        try {
          const once = await exportAndMergeOnce(f, plugin, lease, descriptor, workDir, tryNumber, events);
          done = true;
          return once;
        } finally {
          // A failed try's files go before the next try; a merged try's leftovers (the staging
          // directories its moved files lived in) go with the whole staging, below.
          if (!done) await removeStagingDir(workDir);
        }
      },
      {
        ...f.deps.retry,
        // R-RR-1: failures before host writes, logged and retried with a short backoff.
        onRetry: ({ attempt: failed, delayMs, error, failure }) => {
          retryEvents.push(
            recordRunEvent(db, f.event("warn", "workspace.copyback_retry", `Copyback attempt ${failed} failed before any host write (${failure.reason}); retrying.`, {
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
    f.staging.start(staging);
    if (!merged) await f.staging.join();
    // The export is over either way: the run's release after this finalization takes the stop. A
    // give-back that fails (the database went away) must not hide the attempt's own outcome: the
    // claim then expires and the cleanup sweep stops the sandbox by the same intent (R-EX-5).
    await resumed?.giveBack().catch(() => undefined);
  }
}

async function exportAndMergeOnce(
  f: OwnedFinalization,
  plugin: EnvironmentProvider,
  lease: LeaseHandle,
  descriptor: PreparedWorkspaceDescriptor,
  workDir: string,
  tryNumber: number,
  events: PendingWrites,
): Promise<CopybackResult> {
  // The delta export where the plugin offers it, else (or when the host refuses the delta) the
  // full export, in this try (export-for-merge.ts). The export deadline: a hung provider or
  // stream fails this try before any host write (provider_export_timeout, transient: R-RR-1)
  // instead of holding the ownership lock forever.
  const exported = await exportForMerge({
    plugin,
    lease,
    workDir,
    baseline: descriptor.baseline,
    exclude: descriptor.excludedPaths,
    timeoutMs: f.exportTimeoutMs,
    log: (level, code, message, payload) => {
      events.add(recordRunEvent(f.deps.db, f.event(level, code, message, { ...payload, try: tryNumber })));
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
    locks: f.deps.locks,
    exclude: descriptor.excludedPaths,
    consumeSnapshot: true,
    // R-OWN-9, R-LK-6: under the directory-merge lock, ownership is re-checked before the first
    // host write and again before publishing (also for an unchanged snapshot). R-RW-4: before the
    // first host write the binding check is repeated too (publication repeats the checks).
    hooks: {
      authorize: async () => {
        await f.ownership.assertHeld();
        await assertStillBound(f.deps.db, f.key);
      },
      publish: () => f.ownership.assertHeld(),
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
 * R-EX-6: the exact plugin pinned on the prepared lease, and only while that lease is still
 * this run's seeded sandbox (export-lease-binding.ts): refused before any export, nothing staged.
 */
async function pinnedPlugin(f: OwnedFinalization, descriptor: PreparedWorkspaceDescriptor): Promise<{ plugin: EnvironmentProvider; lease: LeaseHandle }> {
  const row = await f.deps.db.environmentLease.findUnique({
    where: { id: descriptor.leaseId },
    select: { id: true, companyId: true, runId: true, pluginId: true, provider: true, providerLeaseId: true, status: true, metadata: true },
  });
  const binding = decideExportLease(row && { ...row, destroyIntent: readDestroyIntent(row.metadata, row).kind === "present" }, {
    companyId: f.key.companyId,
    runId: f.key.runId,
    leaseId: descriptor.leaseId,
    seededProviderLeaseId: descriptor.seed.providerLeaseId,
  });
  if (binding.kind === "refused") throw new DomainError("conflict", binding.code, binding.message, binding.details);
  const plugin = f.deps.registry.forLease({ pluginId: row!.pluginId, provider: row!.provider });
  return { plugin, lease: binding.handle };
}

function countsOf(outcome: MergeOutcome): MergeCounts {
  return outcome.kind === "unchanged"
    ? { written: 0, deleted: 0, unchanged: true }
    : { written: outcome.written.length, deleted: outcome.deleted.length, unchanged: false };
}
