// Reads what each worker is doing (worker-activity.ts classifies): the company's running runs with
// their controller, their coordinator's phase and the pid of any copyback receipt on them. One query.
import type { PrismaClient } from "@copyback/db";
import { classifyActivity, type WorkerActivity } from "./worker-activity";

/** Per PID: what its running runs are doing (a malformed receipt's pid reads as none). */
export async function readActivity(prisma: PrismaClient, companyId: string, pids: readonly number[]): Promise<Map<number, WorkerActivity>> {
  if (pids.length === 0) return new Map();
  const rows = await prisma.$queryRaw<{ run_id: string; controller_pid: number | null; phase: string | null; owner_pid: number | null }[]>`
    SELECT r.id::text AS run_id, r.controller_pid, f.phase::text AS phase,
           CASE WHEN jsonb_typeof(r.runner_profile_json -> 'nativeWorkspaceFinalizationOwner' -> 'pid') = 'number'
                THEN (r.runner_profile_json -> 'nativeWorkspaceFinalizationOwner' ->> 'pid')::int END AS owner_pid
    FROM heartbeat_runs r LEFT JOIN native_run_finalizations f ON f.run_id = r.id
    WHERE r.company_id = ${companyId}::uuid AND r.status = 'running'`;
  return classifyActivity(
    rows.map((r) => ({ runId: r.run_id, controllerPid: r.controller_pid, phase: r.phase, ownerPid: r.owner_pid })),
    pids,
  );
}
