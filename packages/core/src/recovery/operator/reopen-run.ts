// Reopening the run an export-only retry re-admits (R-EX-3): the same run, not a new one, goes
// back to running so the ordinary finalization commits its saved result.
import type { TransactionClient } from "@copyback/db/client";
import { DomainError } from "../../errors";

/**
 * The run goes back to running for its finalization: no error, not finished, and its claim's
 * status_version re-recorded to the task's current version (the failure blocked the task and
 * bumped it, so the status arbiter would otherwise keep the status: status_changed_since_claim).
 */
export async function reopenRun(tx: TransactionClient, runId: string, statusVersion: number | null): Promise<void> {
  if (statusVersion === null) throw new DomainError("conflict", "run_not_found", "The run's task was not found.");
  const reopened = await tx.$executeRaw`
    UPDATE heartbeat_runs
    SET status = 'running'::run_status, error_code = NULL, error_message = NULL, finished_at = NULL,
        runner_profile_json = jsonb_set(runner_profile_json, '{nativeClaim,statusVersion}', to_jsonb(${statusVersion}::int)),
        updated_at = now()
    WHERE id = ${runId}::uuid AND status = 'failed'::run_status AND runner_profile_json ? 'nativeClaim'`;
  if (reopened !== 1) throw new DomainError("conflict", "run_not_running", "The run cannot be reopened (it changed, or it never claimed its task).");
}
