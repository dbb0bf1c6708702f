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

/** R-EX-1: the third transient export failure spent the budget (finalize-policy.ts MAX_TRANSIENT_EXPORT_FAILURES). */
export const EXPORT_RETRY_EXHAUSTED_CAUSE = "native_workspace_sync_out_retry_exhausted";

/** R-EX-1, R-EX-2: the export-only retry, never a new agent run; the reason is transport/copyback. */
export const EXPORT_RETRY_EXHAUSTED_NEXT_ACTION =
  "Copying the sandbox's files back failed three times (a transport or copyback failure; the saved result and the sandbox are kept, the sandbox is stopped and retained). " +
  "A runtime manager verifies the run, lease and stopped-provider receipt, restores the provider's transport or other prerequisites without touching the sandbox's files, " +
  "then requests the export-only retry (POST /api/issues/:id/recovery-actions/retry-workspace-export). The same run then commits its saved result; no new agent turn is started.";

// Causes the failure-before-result and legacy paths open (R-FO-1, R-RR-2). Named here so the
// writers, the resolve service and the console share one spelling; each writer owns its text.

/** R-FO-1, R-FO-3: a native run failed before its result; its exact sandbox is pinned for its files. */
export const FILE_RECOVERY_CAUSE = "native_workspace_file_recovery_required";

/**
 * R-FO-5: the file-recovery obligation's next action names the original run and its exact
 * allocation and asks for evidence that the allocation stopped and its files were recovered. It
 * never recommends rerunning: recording that evidence retries nothing, certifies no external
 * action, changes neither owner nor status and needs no accepted result. Deterministic in its
 * inputs, so a repeated writer writes exactly the same words.
 */
export function fileRecoveryNextAction(input: { runId: string; leaseId: string | null; providerLeaseId: string | null; pluginId: string | null }): string {
  const allocation = input.providerLeaseId
    ? `allocation ${input.providerLeaseId} of plugin ${input.pluginId ?? "unknown"} (lease ${input.leaseId ?? "unknown"})`
    : `its sandbox (lease ${input.leaseId ?? "none recorded"})`;
  return (
    `Run ${input.runId} ended before it submitted a result; the files its agent wrote exist only in ${allocation}, which is pinned: stopped and retained, never reused or destroyed. ` +
    "A board operator confirms that this exact allocation has stopped, recovers the files it holds into the workspace by hand (or confirms there is nothing to keep), " +
    "and records that evidence on this recovery action. Recording it does not retry the old turn, does not certify external actions the agent may have taken, " +
    "and leaves the task's owner and status as they are."
  );
}

/**
 * The instructions of an action whose retained sandbox an operator discarded (Discard). The files
 * it asked for are gone, so nothing can be recovered any more: the action waits for a board
 * operator to close it deliberately (the `cancelled` disposition with a note), which releases the
 * task for a new run. Replaces the instructions the action was opened with.
 */
export function filesGivenUpNextAction(input: { providerLeaseId: string | null; byType: string; at: string; reason: string }): string {
  return (
    `Sandbox allocation ${input.providerLeaseId ?? "(unnamed)"} was discarded by ${input.byType} at ${input.at} (${input.reason}); the files it held are gone and a confirmed destruction receipt is recorded on this action. ` +
    "Nothing is left to recover: a board operator closes this action with the cancelled disposition and a note, which lets the task's agent be woken again. " +
    "It does not retry the old turn, certify external actions the agent may have taken, or change the task's owner or status."
  );
}

/** R-RR-2: a legacy run could not copy its required files back; its allocation is retained. */
export const LEGACY_COPYBACK_REPAIR_CAUSE = "legacy_workspace_copyback_repair_required";

/**
 * R-RR-2, R-RR-3, R-RR-5, R-RR-6: the legacy repair hold's instructions. The allocation is stopped
 * and retained (`retain_on_failure`), never destroyed or reused; elapsed time proves nothing; the
 * repair is recorded through the guarded resolution API with the unchanged status; no new turn.
 */
export const LEGACY_COPYBACK_REPAIR_NEXT_ACTION =
  "Copying this legacy run's required workspace files back to the host failed; its sandbox allocation is stopped and retained (retain_on_failure), never destroyed or reused. " +
  "A board operator lists the hold (GET /api/issues/:id/recovery-actions), inspects the exact lease (GET /api/environment-leases/:leaseId) and confirms cleanup stopped it, " +
  "recovers the missing files from that allocation by hand, then records the repair (POST /api/issues/:id/recovery-actions/resolve with outcome \"restored\", the task's unchanged sourceIssueStatus, " +
  "executionReconciliation for the source run and workspaceRepairEvidence). Recording it keeps the task's owner, status and conversation as they are and starts no new turn; " +
  "remove the allocation in the provider's console only after its files are no longer needed.";

/** R-UA-3: an archive over the entry or size limits, or with case/normalization collisions. */
export const EXPORT_LIMIT_CAUSE = "native_workspace_sync_out_limit_exceeded";

/** What each limit or collision is, in words (the violation codes of export-policy.ts EXPORT_LIMIT_FAILURE_CODES). */
const EXPORT_LIMIT_WORDS: Readonly<Record<string, string>> = {
  too_many_entries: "more files, directories and links than one export may hold",
  entry_too_large: "a file larger than one export may carry",
  total_too_large: "more bytes in all than one export may carry",
  metadata_too_large: "more archive metadata than one export may carry",
  compression_ratio: "an archive that inflates far beyond its compressed size",
  path_too_deep: "a path nested deeper than allowed",
  path_too_long: "a path or name longer than allowed",
  case_collision: "two paths that differ only by letter case (they would overwrite each other on a case-insensitive host)",
  normalization_collision: "two paths that are the same name after Unicode normalization",
};

/**
 * R-UA-3, R-UA-4: the limit hold's instructions. They name the limit crossed (its setting and
 * value, and the first archive-relative path over it: never a host path) and what an operator can
 * do; the files were neither written nor silently dropped. Deterministic in its inputs, so a
 * repeated writer writes exactly the same words.
 */
export function exportLimitNextAction(detail: { violation: string; limit: string | null; max: number | null; path: string }): string {
  const what = EXPORT_LIMIT_WORDS[detail.violation] ?? `an archive limit (${detail.violation})`;
  const setting = detail.limit === null ? "" : detail.max === null ? ` [limit ${detail.limit}]` : ` [limit ${detail.limit} = ${detail.max}]`;
  const where = detail.path === "" ? "" : `, first at "${detail.path}"`;
  return (
    `Copying the sandbox's files back stopped at an archive limit: the export holds ${what}${setting}${where}. ` +
    "Nothing was written to the host workspace and nothing was left out: the saved result and the sandbox (stopped and retained, never reused or destroyed) are kept. " +
    "A runtime manager inspects the retained sandbox through the provider's console, copies the files that matter to the host workspace by hand " +
    "(leaving out or renaming what crosses the limit; a generated tree such as a dependency directory belongs in the execution workspace's excluded paths, so later runs do not export it), " +
    "then records the repair on this recovery action (POST /api/issues/:id/recovery-actions/resolve with outcome \"restored\", the task's unchanged status and the stop and recovered-files evidence, or the form under Recovery details) once cleanup has confirmed the sandbox stopped. " +
    "Recording it changes neither the task nor the run; no new agent turn is started."
  );
}

/**
 * R-EX-4, R-UI-2: a copyback that failed for good without an automatic way past it: the host
 * changed the same files (a merge conflict), the task was moved on before anything was written
 * (the publication's binding check, R-RW-4), another final failure, possibly after host writes
 * began, or a commit that refused the accepted result after its files reached the host. The
 * accepted result could not be applied; the exact sandbox is pinned by a stop-only
 * intent in the same transaction that fails the run, and this board-owned hold names it.
 */
export const COPYBACK_FAILED_CAUSE = "native_workspace_sync_out_failed";

/** What the copyback-failed hold records as what went wrong (its evidence's `failure`). */
export type CopybackFailureKind = "merge_conflict" | "binding_changed" | "copyback_failed" | "result_refused";

/**
 * R-EX-4, R-UI-2: the copyback-failed hold's instructions: what happened (in words, with the
 * stable code), what the host may hold, and the resolution path (the guarded resolve API, as for
 * the other file holds: "restored" with the sandbox's confirmed stop receipt and the evidence, or a
 * deliberate board disposition). Never a new agent turn. Deterministic in its inputs, so a repeated
 * writer writes exactly the same words.
 */
export function copybackFailedNextAction(input: { failure: CopybackFailureKind; failureCode: string; hostWritesStarted: boolean; conflictCount: number | null }): string {
  const what =
    input.failure === "merge_conflict"
      ? `Copying the sandbox's files back stopped at a merge conflict (${input.failureCode}): the host workspace changed ${input.conflictCount ?? "some"} of the same paths since the run started, so nothing was written.`
      : input.failure === "binding_changed"
        ? `Copying the sandbox's files back was refused (${input.failureCode}): the task was closed, reassigned or taken over by another run before anything was written, so the run's old files were not applied.`
        : input.failure === "result_refused"
          ? input.hostWritesStarted
            ? `The sandbox's files reached the host workspace, but applying the accepted result to the task was refused (${input.failureCode}): the host holds the run's files while the task did not take its result.`
            : `The copyback changed nothing on the host, but applying the accepted result to the task was refused (${input.failureCode}).`
          : input.hostWritesStarted
          ? `Copying the sandbox's files back failed after host writes began (${input.failureCode}): the host workspace may hold some of the run's files and not others.`
          : `Copying the sandbox's files back failed for good before any host write (${input.failureCode}).`;
  return (
    `${what} The accepted result was not applied; it and the sandbox (stopped and retained, never reused or destroyed) are kept. ` +
    "A runtime manager inspects the retained sandbox through the provider's console and the run's merge details, copies the files that matter to the host workspace by hand (or confirms there is nothing to keep), " +
    "then records the repair on this recovery action (POST /api/issues/:id/recovery-actions/resolve with outcome \"restored\", the task's unchanged status and the stop and recovered-files evidence, or the form under Recovery details) once cleanup has confirmed the sandbox stopped; " +
    "a board operator may instead close it deliberately (false_positive or cancelled, with a note). Recording it changes neither the task nor the run; no new agent turn is started."
  );
}

/**
 * R-PV-1: two verification reads of the agent pack were inconclusive (a timeout, a signal, no exit
 * status, a transport error): nothing proves the pack wrong, nothing proves it right. The run is
 * held before its agent was ever started; nothing of the task's work exists in a sandbox.
 */
export const PACK_VERIFICATION_UNAVAILABLE_CAUSE = "runner_remote_provider_verification_unavailable";

/**
 * R-PV-1: the hold's instructions: what happened, that nothing was lost, and the resolution path
 * (the guarded resolve API with outcome "reverify", which gives the same run a fresh read budget;
 * or Stop the run, then close the hold deliberately). Deterministic in its inputs.
 */
export function packVerificationUnavailableNextAction(input: { runId: string; runtime: string; version: string; lastReason: string }): string {
  return (
    `The agent pack (${input.runtime} ${input.version}) of run ${input.runId} could not be verified in its sandbox: two verification reads ended without an answer (last: ${input.lastReason}), which proves neither a good nor a bad pack. ` +
    "The run is held in the queue and its agent was never started; no tool ran and nothing of the task's work is in a sandbox. " +
    "A runtime manager restores the provider's command channel (its API, network or credentials), then asks for a re-verification " +
    "(POST /api/issues/:id/recovery-actions/resolve with outcome \"reverify\", the task's unchanged status, the held run with status queued, and a note; or `copyback recovery resolve --outcome reverify`, or the form under Recovery details): " +
    "the same run is dispatched again and reads the pack again before its first turn. To give the run up instead, Stop it, then close this action with the cancelled disposition and a note."
  );
}
