// Issue 23 part 1: moving an execution workspace to another host is an explicit, audited operator
// command. The workspace's files are on its host's disk, so the move only re-binds the row (the
// operator moved or recreated the directory at the same host path there); it refuses while anything
// of the workspace is active (a queued or running run), settling (an unsettled finalization),
// retained (a lease that is not destroyed: its sandbox, local or reusable, belongs to the old
// binding) or held (an open recovery action on one of its tasks). The refusal changes nothing; the
// move and its activity row commit in one transaction, the workspace row locked so a claim that
// would bind it meanwhile waits. Queued runs do not block: they are what a move of a dead host's
// workspace is for, and the new host claims them.
import { Prisma, withTransaction, type PrismaClient } from "@copyback/db/client";
import { parseHostId } from "../deployment/host-id";
import { conflict, invalid, notFound } from "../errors";
import { UNSETTLED_FINALIZATION_SQL } from "../leases/lease-holds";
import { recordActivity, type Actor } from "../records/record-activity";

export interface MoveWorkspaceHostInput {
  workspaceId: string;
  toHostId: string;
  reason: string;
  actor: Actor;
}

export interface MoveWorkspaceHostResult {
  workspaceId: string;
  fromHostId: string | null;
  toHostId: string;
}

interface Blockers {
  runs: number;
  finalizing: number;
  leases: number;
  actions: number;
}

export async function moveWorkspaceHost(db: PrismaClient, input: MoveWorkspaceHostInput): Promise<MoveWorkspaceHostResult> {
  const toHostId = parseHostId(input.toHostId, "--to-host");
  const reason = input.reason.trim();
  if (reason.length === 0) throw invalid("reason_required", "Say why the workspace moves to another host.");
  return withTransaction(db, async (tx) => {
    const [workspace] = await tx.$queryRaw<{ id: string; company_id: string; host_id: string | null }[]>`
      SELECT id, company_id, host_id FROM execution_workspaces WHERE id = ${input.workspaceId}::uuid FOR UPDATE`;
    if (!workspace) throw notFound(`The execution workspace ${input.workspaceId}`);
    if (workspace.host_id === toHostId) throw conflict("workspace_already_on_host", `The workspace is already bound to host ${toHostId}.`);
    const [blockers] = await tx.$queryRaw<Blockers[]>(blockersSql(workspace.id));
    const reasons = [
      blockers!.runs > 0 ? `${blockers!.runs} running run(s)` : null,
      blockers!.finalizing > 0 ? `${blockers!.finalizing} unsettled finalization(s)` : null,
      blockers!.leases > 0 ? `${blockers!.leases} sandbox lease(s) not destroyed (active or retained)` : null,
      blockers!.actions > 0 ? `${blockers!.actions} open recovery action(s)` : null,
    ].filter((r): r is string => r !== null);
    if (reasons.length > 0) {
      throw conflict("workspace_busy", `The workspace cannot move while it has ${reasons.join(", ")}.`, { ...blockers! });
    }
    await tx.$executeRaw`UPDATE execution_workspaces SET host_id = ${toHostId}, updated_at = now() WHERE id = ${workspace.id}::uuid`;
    await recordActivity(tx, {
      companyId: workspace.company_id,
      actor: input.actor,
      action: "execution_workspace.host_moved",
      entityType: "execution_workspace",
      entityId: workspace.id,
      details: { fromHostId: workspace.host_id, toHostId, reason },
    });
    return { workspaceId: workspace.id, fromHostId: workspace.host_id, toHostId };
  });
}

function blockersSql(workspaceId: string): Prisma.Sql {
  return Prisma.sql`
    SELECT
      (SELECT count(*)::int FROM heartbeat_runs r JOIN issues i ON i.id = r.native_issue_id
        WHERE i.execution_workspace_id = ${workspaceId}::uuid AND r.status = 'running') AS runs,
      (SELECT count(*)::int FROM native_run_finalizations nf JOIN issues i ON i.id = nf.issue_id
        WHERE i.execution_workspace_id = ${workspaceId}::uuid AND nf.phase IN ${UNSETTLED_FINALIZATION_SQL}) AS finalizing,
      (SELECT count(*)::int FROM environment_leases l
        WHERE l.execution_workspace_id = ${workspaceId}::uuid AND l.status <> 'destroyed'::lease_status) AS leases,
      (SELECT count(*)::int FROM issue_recovery_actions a JOIN issues i ON i.id = a.issue_id
        WHERE i.execution_workspace_id = ${workspaceId}::uuid AND a.status IN ('active', 'escalated')) AS actions`;
}
