// The recovery causes of the spec and the text each one's next action shows the person who reads
// it. One place, so that a repeated sweep writes exactly the same words (R-OWN-5, R-ATT-4).

/** R-ORP-4: a copyback owner whose controller could not be proven stopped. */
export const OWNER_UNVERIFIED_CAUSE = "native_workspace_finalization_owner_unverified";

/**
 * R-ATT-4: copyback-specific instructions. They never recommend a replacement provider run: the
 * accepted result and the sandbox's files are kept, and the same run finishes the copyback.
 */
export const OWNER_UNVERIFIED_NEXT_ACTION =
  "An instance operator verifies through the deployment platform that the recorded controller and its copyback subprocesses have stopped, " +
  "then attests it (POST /api/issues/:id/recovery-actions/resume-workspace-finalization, or `copyback recovery attest`). " +
  "Keep the sandbox, the accepted result and the workspace descriptor as they are: no new agent turn, nothing deleted from the workspace. " +
  "The reconciler then finishes the copyback of the same run and applies its saved result.";

/** R-EX-1: transient export failures used up their three coordinator attempts. */
export const EXPORT_RETRY_EXHAUSTED_CAUSE = "native_workspace_sync_out_retry_exhausted";

/** R-EX-1, R-EX-2: the export-only retry, never a new agent run; the reason is transport/copyback. */
export const EXPORT_RETRY_EXHAUSTED_NEXT_ACTION =
  "Copying the sandbox's files back failed three times (a transport or copyback failure; the saved result and the sandbox are kept, the sandbox is stopped and retained). " +
  "A runtime manager verifies the run, lease and stopped-provider receipt, restores the provider's transport or other prerequisites without touching the sandbox's files, " +
  "then requests the export-only retry (POST /api/issues/:id/recovery-actions/retry-workspace-export). The same run then commits its saved result; no new agent turn is started.";

export const RECOVERY_ACTION_OPEN_STATUSES = ["active", "escalated"] as const;

// Causes the failure-before-result and legacy paths open (issue 11). Named here first so the
// writers, the resolve service and the console share one spelling; each writer owns its text.

/** R-FO-1, R-FO-3: a native run failed before its result; its exact sandbox is pinned for its files. */
export const FILE_RECOVERY_CAUSE = "native_workspace_file_recovery_required";

/** R-RR-2: a legacy run could not copy its required files back; its allocation is retained. */
export const LEGACY_COPYBACK_REPAIR_CAUSE = "legacy_workspace_copyback_repair_required";

/** R-UA-3: an archive over the entry or size limits, or with case/normalization collisions. */
export const EXPORT_LIMIT_CAUSE = "native_workspace_sync_out_limit_exceeded";
