// R-RW-2, R-RW-3: the reconciler's automatic takeover of unverified-owner holds whose receipt
// names a platform deployment: asks the cloud harness, and on a verified receipt releases exactly
// that owner (harness/harness-takeover.ts); the finalization sweep then copies back the saved
// result as after an operator's attestation. Registered only when the tenant is configured with a
// harness (R-RW-5: without it, unknown owners stay fenced). A refused hold is asked again after a
// pause (in memory: the hold itself is not rewritten by repeated checks, R-OWN-5).
import type { PrismaClient } from "@copyback/db/client";
import { OWNER_UNVERIFIED_CAUSE } from "../../records/causes";
import { FINALIZATION_OWNER_KEY } from "../../records/finalization-owner-receipt";
import { OPEN_RECOVERY_ACTION_STATUSES_SQL } from "../../records/actions/open-statuses-sql";
import type { TenantHarnessConfig } from "../harness/harness-client";
import { takeOverWithHarness, type HoldRef } from "../harness/harness-takeover";
import type { Sweep, SweepLog } from "./sweep";

export interface HarnessTakeoverSweepDeps {
  db: PrismaClient;
  harness: TenantHarnessConfig;
  log?: SweepLog;
  /** How long a refused hold waits before the harness is asked again (default 15 s). */
  retryAfterMs?: number;
  now?: () => Date;
}

export function harnessTakeoverSweep(deps: HarnessTakeoverSweepDeps): Sweep<HoldRef> {
  const retryAfterMs = deps.retryAfterMs ?? 15_000;
  const pausedUntil = new Map<string, number>();
  return {
    name: "harness_takeover",
    idOf: (hold) => hold.runId,
    async due(limit) {
      const rows = await deps.db.$queryRaw<{ action_id: string; company_id: string; issue_id: string; run_id: string }[]>`
        SELECT a.id AS action_id, a.company_id, a.issue_id, a.run_id
        FROM issue_recovery_actions a
        JOIN heartbeat_runs r ON r.id = a.run_id AND r.company_id = a.company_id
        WHERE a.cause = ${OWNER_UNVERIFIED_CAUSE} AND a.status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL}
          AND NOT (a.evidence ? 'attestation')
          AND r.runner_profile_json -> ${FINALIZATION_OWNER_KEY} ? 'platform'
        ORDER BY a.created_at, a.id
        LIMIT ${limit * 4}`;
      const now = Date.now();
      return rows
        .filter((row) => (pausedUntil.get(row.action_id) ?? 0) <= now)
        .slice(0, limit)
        .map((row) => ({ actionId: row.action_id, companyId: row.company_id, issueId: row.issue_id, runId: row.run_id }));
    },
    async handle(hold) {
      const outcome = await takeOverWithHarness(deps.db, deps.harness, hold, deps.now);
      if (outcome === "admitted") {
        pausedUntil.delete(hold.actionId);
        deps.log?.info({ runId: hold.runId, actionId: hold.actionId }, "the cloud harness proved the previous controller stopped");
      } else {
        pausedUntil.set(hold.actionId, Date.now() + retryAfterMs);
      }
      return outcome;
    },
  };
}
