// The legacy adapter's copy-back (the older protocol, R-RR-1, R-RR-2): at the end of a legacy
// run's turn the controller itself restores the required workspace files from the sandbox into
// the host, through the directory-merge lock, without the native coordinator: export through the
// lease's pinned plugin (R-EX-6), validate / salvage (R-UA-2), extract into private staging and
// merge against the prepared baseline under the directory-merge lock (R-LK-*), tried up to three
// times in total before any host write with a short backoff (R-RR-1). An export that stays unsafe
// after salvage is NOT omitted here: a legacy run's files are required, so it is a copy-back
// failure that the repair hold keeps (recovery/legacy/record-copyback-failure.ts).
// Recorded as a `workspace_restore` operation, never `workspace_finalize` (the native barrier).
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { PrismaClient } from "@copyback/db/client";
import { classifyCopybackFailure } from "../copyback/merge/classify";
import { MergeConflictError } from "../copyback/merge/errors";
import { mergeSnapshot } from "../copyback/merge/merge-snapshot";
import { runWithCopybackRetries, type CopybackRetryOptions } from "../copyback/merge/retries";
import type { MergeLockProvider } from "../copyback/merge/types";
import { DomainError } from "../errors";
import { exportForMerge } from "../finalization/export-for-merge";
import { createStagingDir, removeStagingDir } from "../finalization/staging";
import { loadPreparedWorkspace } from "../finalization/workspace-descriptor";
import { requireCapability } from "../providers/registry";
import type { EnvironmentProvider, LeaseHandle } from "../providers/types";
import { recordRunEvent } from "../records/run-log";
import { errorCodeOf, finishWorkspaceOperation, startWorkspaceOperation } from "../records/workspace-operations";

export const LEGACY_COPYBACK_FAILED_CODE = "legacy_workspace_copyback_failed";

export interface LegacyCopybackDeps {
  db: PrismaClient;
  instanceRoot: string;
  locks: MergeLockProvider;
  retry?: Pick<CopybackRetryOptions, "backoffMs" | "sleep">;
}

export type LegacyCopybackOutcome =
  | { kind: "copied"; operationId: string; written: number; deleted: number; unchanged: boolean }
  | { kind: "failed"; operationId: string | null; code: string; message: string; hostWritesStarted: boolean };

export async function copyBackLegacyWorkspace(
  deps: LegacyCopybackDeps,
  input: { companyId: string; runId: string; issueId: string; lease: LeaseHandle; plugin: EnvironmentProvider },
): Promise<LegacyCopybackOutcome> {
  const { db } = deps;
  const key = { companyId: input.companyId, runId: input.runId, issueId: input.issueId };
  let operationId: string | null = null;
  const retryEvents: Promise<void>[] = [];
  try {
    const descriptor = await loadPreparedWorkspace(db, key);
    if (descriptor.leaseId !== input.lease.leaseId) {
      throw new DomainError("conflict", "legacy_lease_mismatch", "The run's prepared workspace names another lease.");
    }
    requireCapability(input.plugin, "exportWorkspace");
    operationId = await startWorkspaceOperation(db, { ...key, phase: "workspace_restore", metadata: { leaseId: input.lease.leaseId, legacy: true } });
    const staging = await createStagingDir(deps.instanceRoot, `${input.runId}-legacy`);
    try {
      const outcome = await runWithCopybackRetries(
        async (tryNumber) => {
          const workDir = join(staging, `try-${tryNumber}`);
          await mkdir(workDir, { mode: 0o700 });
          try {
            // The delta export where the plugin offers it, the full export otherwise
            // or when the host refuses the delta (finalization/export-for-merge.ts).
            const exported = await exportForMerge({
              plugin: input.plugin,
              lease: input.lease,
              workDir,
              baseline: descriptor.baseline,
              exclude: descriptor.excludedPaths,
              log: (level, code, message, payload) => recordRunEvent(db, { ...eventKey(key), level, code, message, payload: { ...payload, operationId, try: tryNumber } }),
            });
            if (exported.kind === "omitted") {
              // Final (unsafe_archive is never retried): the required files cannot be restored.
              throw new DomainError("conflict", "unsafe_archive", "The sandbox's export stayed unsafe after salvage; the required files could not be restored.");
            }
            return await mergeSnapshot({
              target: descriptor.hostPath,
              baseline: descriptor.baseline,
              snapshotDir: exported.snapshotDir,
              snapshotManifest: exported.snapshotManifest,
              locks: deps.locks,
              exclude: descriptor.excludedPaths,
              consumeSnapshot: true,
            });
          } finally {
            await removeStagingDir(workDir);
          }
        },
        {
          ...deps.retry,
          // R-RR-1: failures before any host write are retried with a short backoff, logged.
          onRetry: ({ attempt, delayMs, error, failure }) => {
            retryEvents.push(
              recordRunEvent(db, {
                ...eventKey(key),
                level: "warn",
                code: "legacy.copyback_retry",
                message: `Legacy copy-back attempt ${attempt} failed before any host write (${failure.reason}); retrying.`,
                payload: { operationId, try: attempt, delayMs, reason: failure.reason, errorCode: errorCodeOf(error, "unclassified") },
              }),
            );
          },
        },
      );
      const counts =
        outcome.kind === "unchanged" ? { written: 0, deleted: 0, unchanged: true } : { written: outcome.written.length, deleted: outcome.deleted.length, unchanged: false };
      await finishWorkspaceOperation(db, operationId, { status: "succeeded", metadata: { leaseId: input.lease.leaseId, legacy: true, ...counts } });
      await recordRunEvent(db, {
        ...eventKey(key),
        level: "info",
        code: "legacy.copyback_restored",
        message: counts.unchanged ? "Legacy copy-back: the sandbox returned no changes." : `Legacy copy-back restored the workspace: ${counts.written} written, ${counts.deleted} deleted.`,
        payload: { operationId, ...counts },
      });
      return { kind: "copied", operationId, ...counts };
    } finally {
      await Promise.allSettled(retryEvents);
      await removeStagingDir(staging);
    }
  } catch (error) {
    const failure = classifyCopybackFailure(error);
    const code = error instanceof MergeConflictError ? "workspace_merge_conflict" : errorCodeOf(error, `workspace_copyback_${failure.reason}`);
    const message = `The legacy copy-back of the required workspace files failed (${code}).`;
    if (operationId) await finishWorkspaceOperation(db, operationId, { status: "failed", errorCode: code, metadata: { leaseId: input.lease.leaseId, legacy: true, reason: failure.reason } }).catch(() => false);
    await recordRunEvent(db, { ...eventKey(key), level: "error", code: "legacy.copyback_failed", message, payload: { operationId, errorCode: code, reason: failure.reason } }).catch(() => undefined);
    return { kind: "failed", operationId, code, message, hostWritesStarted: failure.reason === "after_host_writes" };
  }
}

function eventKey(key: { companyId: string; runId: string }) {
  return { companyId: key.companyId, runId: key.runId };
}
