// Which leases hold files for recovery. A held lease is never handed to another
// run: the reuse of a `reuse_by_environment` lease selects only leases that are NOT held, in the
// acquisition query itself and again in its compare-and-set (acquire-lease.ts), so nothing read
// between the two can make a held sandbox reusable. A lease is held while
//   - an open recovery action names it (issue_recovery_actions.lease_id, or its evidence's
//     `leaseIds`), whatever its cause;
//   - it carries a stop-only intent (`sandboxStopAndRetain`): a stop not yet proven, or one an
//     export-only retry recorded before resuming it (R-EX-4, R-EX-5);
//   - its resume failed once (`reuseRefused`): it cannot prove it is the recorded sandbox;
//   - its run failed, was cancelled or timed out without committing: the sandbox may hold the
//     only copy of that run's work (R-EX-4, release-policy.ts keeps it);
//   - its run has an accepted result whose finalization is not settled (the coordinator in
//     result_accepted, workspace_finalizing, arbitrating or retryable_failure, a held one
//     included): the run is still `running` and its sandbox is the only copy of the result's
//     files, which the next attempt exports (R-ORP-3, R-EX-4). Reusing it would reseed it under
//     another run and the retry would export that run's files as this one's;
//   - it carries an operator's discard intent (`sandboxDiscard`) and is not destroyed yet: a
//     Discard in flight or interrupted (sandboxes/discard-intent.ts). Its sandbox may already be
//     gone, so it is never handed to another run nor released by the ordinary cleanup; the Discard's
//     resumption finishes it, and the Retained list shows it as being discarded.
// Each part is read through an index: the partial indexes issue_recovery_actions_open_by_lease and
// issue_recovery_actions_open_lease_ids (hand-written), heartbeat_runs and native_run_finalizations
// by run id. Hand-written metadata that is not an object holds nothing here, but it grants nothing
// either (confirmedStopReceipt refuses it).
import { Prisma } from "@copyback/db/client";
import { OPEN_RECOVERY_ACTION_STATUSES_SQL } from "../records/actions";
import { LEASE_METADATA_KEYS } from "./lease-metadata";

/** Coordinator phases of an accepted result whose copyback is not settled (neither committed nor terminal). */
export const UNSETTLED_FINALIZATION_PHASES = ["result_accepted", "workspace_finalizing", "arbitrating", "retryable_failure"] as const;
/** The same phases as an SQL list, for `nf.phase IN ${UNSETTLED_FINALIZATION_SQL}` (Discard's refusal reads it too). */
export const UNSETTLED_FINALIZATION_SQL = Prisma.sql`(${Prisma.join(UNSETTLED_FINALIZATION_PHASES.map((phase) => Prisma.sql`${phase}::finalization_phase`))})`;
const UNSETTLED = UNSETTLED_FINALIZATION_SQL;

/** True for a metadata key that holds a document (a JSON null is a cleared one). */
const hasDocument = (lease: Prisma.Sql, key: string) => Prisma.sql`COALESCE(jsonb_typeof(${lease}.metadata -> ${key}), 'null') <> 'null'`;

/** The SQL condition "the lease `alias` holds files for recovery" (alias: the table or its alias in the statement). */
export function leaseHeldSql(alias: string): Prisma.Sql {
  const lease = Prisma.raw(alias);
  return Prisma.sql`(
    ${hasDocument(lease, LEASE_METADATA_KEYS.stopIntent)}
    OR ${hasDocument(lease, LEASE_METADATA_KEYS.reuseRefused)}
    OR ${hasDocument(lease, LEASE_METADATA_KEYS.discardIntent)}
    OR EXISTS (SELECT 1 FROM issue_recovery_actions ra WHERE ra.lease_id = ${lease}.id AND ra.status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL})
    OR EXISTS (SELECT 1 FROM issue_recovery_actions ra
               WHERE ra.status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL} AND ra.evidence -> 'leaseIds' @> jsonb_build_array(${lease}.id::text))
    OR EXISTS (SELECT 1 FROM heartbeat_runs hr
               WHERE hr.id = ${lease}.run_id AND hr.status IN ('failed'::run_status, 'cancelled'::run_status, 'timed_out'::run_status)
                 AND NOT EXISTS (SELECT 1 FROM native_run_finalizations nf WHERE nf.run_id = hr.id AND nf.phase = 'committed'::finalization_phase))
    OR EXISTS (SELECT 1 FROM native_run_finalizations nf WHERE nf.run_id = ${lease}.run_id AND nf.phase IN ${UNSETTLED})
  )`;
}
