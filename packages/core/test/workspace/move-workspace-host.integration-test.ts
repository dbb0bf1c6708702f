// Issue 23 part 1: moving a workspace to another host is an explicit, audited operator command
// that refuses while anything of it is active (a running run), retained (a lease not destroyed)
// or held (an open recovery action); a refusal changes nothing. Real PostgreSQL. No requirement
// id exists for this rule: named by the issue's rule.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { claimQueuedRuns } from "../../src/dispatch/claim-runs";
import { wakeAgent } from "../../src/runs/wake-agent";
import { moveWorkspaceHost } from "../../src/workspace/move-workspace-host";
import { buildCompany, CONTROLLER, USER_ACTOR } from "../runs/runs-fixture";

const db = useTestDatabase();
const actor = USER_ACTOR();
const REASON = "Host A was retired; the workspace directory was copied to host B.";

async function bound(hostId: string) {
  const world = await buildCompany(db.prisma());
  await db.prisma().executionWorkspace.update({ where: { id: world.workspace.id }, data: { hostId } });
  return world;
}
const hostOf = async (id: string) => (await db.prisma().executionWorkspace.findUniqueOrThrow({ where: { id } })).hostId;

describe("move a workspace to another host (issue 23)", () => {
  it("host affinity: an idle workspace moves, with one audited activity row; a queued run follows to the new host", async () => {
    const world = await bound("host-a");
    const issue = await world.issue();
    const { runId } = await wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, actor });
    const result = await moveWorkspaceHost(db.prisma(), { workspaceId: world.workspace.id, toHostId: "host-b", reason: REASON, actor });
    expect(result).toEqual({ workspaceId: world.workspace.id, fromHostId: "host-a", toHostId: "host-b" });
    expect(await hostOf(world.workspace.id)).toBe("host-b");
    const rows = await db.prisma().activityLog.findMany({ where: { entityId: world.workspace.id, action: "execution_workspace.host_moved" } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.details).toEqual({ fromHostId: "host-a", toHostId: "host-b", reason: REASON });
    expect((await claimQueuedRuns(db.prisma(), { limit: 50, controller: CONTROLLER, hostId: "host-a" })).map((r) => r.runId)).not.toContain(runId);
    expect((await claimQueuedRuns(db.prisma(), { limit: 50, controller: CONTROLLER, hostId: "host-b" })).map((r) => r.runId)).toContain(runId);
  });

  it("host affinity: refuses while a run of it is running, a lease of it is not destroyed, or a recovery action is open; nothing changes", async () => {
    const world = await bound("host-a");
    const issue = await world.issue();
    const { runId } = await wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, actor });
    await claimQueuedRuns(db.prisma(), { limit: 50, controller: CONTROLLER, hostId: "host-a" });
    const move = () => moveWorkspaceHost(db.prisma(), { workspaceId: world.workspace.id, toHostId: "host-b", reason: REASON, actor });
    await expect(move()).rejects.toMatchObject({ code: "workspace_busy", message: expect.stringContaining("1 running run(s)") });

    await db.prisma().heartbeatRun.update({ where: { id: runId }, data: { status: "succeeded", finishedAt: new Date() } });
    await db.prisma().nativeRunFinalization.updateMany({ where: { runId }, data: { phase: "committed" } });
    const lease = await db.prisma().environmentLease.create({
      data: { companyId: world.company.id, environmentId: world.environment.id, executionWorkspaceId: world.workspace.id, runId, provider: "local", pluginId: "builtin.local", leasePolicy: "retain_on_failure", status: "released", hostId: "host-a" },
    });
    await expect(move()).rejects.toMatchObject({ code: "workspace_busy", message: expect.stringContaining("1 sandbox lease(s) not destroyed") });

    await db.prisma().environmentLease.update({ where: { id: lease.id }, data: { status: "destroyed" } });
    await db.prisma().issueRecoveryAction.create({
      data: { companyId: world.company.id, issueId: issue.id, runId, cause: "native_workspace_finalization_owner_unverified", fingerprint: `move-${runId}`, ownerType: "board", status: "active" },
    });
    await expect(move()).rejects.toMatchObject({ code: "workspace_busy", message: expect.stringContaining("1 open recovery action(s)") });
    expect(await hostOf(world.workspace.id)).toBe("host-a");
    expect(await db.prisma().activityLog.count({ where: { entityId: world.workspace.id, action: "execution_workspace.host_moved" } })).toBe(0);
  });

  it("host affinity: bad input is a clear error and changes nothing (bad host id, empty reason, unknown workspace, same host)", async () => {
    const world = await bound("host-a");
    const base = { workspaceId: world.workspace.id, toHostId: "host-b", reason: REASON, actor };
    await expect(moveWorkspaceHost(db.prisma(), { ...base, toHostId: "Host B" })).rejects.toMatchObject({ code: "host_id_invalid" });
    await expect(moveWorkspaceHost(db.prisma(), { ...base, reason: "  " })).rejects.toMatchObject({ code: "reason_required" });
    await expect(moveWorkspaceHost(db.prisma(), { ...base, workspaceId: "00000000-0000-4000-8000-000000000000" })).rejects.toMatchObject({ kind: "not_found" });
    await expect(moveWorkspaceHost(db.prisma(), { ...base, toHostId: "host-a" })).rejects.toMatchObject({ code: "workspace_already_on_host" });
    expect(await hostOf(world.workspace.id)).toBe("host-a");
  });
});
