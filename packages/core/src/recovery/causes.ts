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

export const RECOVERY_ACTION_OPEN_STATUSES = ["active", "escalated"] as const;
