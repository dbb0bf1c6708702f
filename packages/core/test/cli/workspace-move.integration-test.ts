// Issue 23 part 1: `copyback workspace move` re-binds a workspace to another host with an audit
// row, and its refusals (here: a running run; a missing option) exit non-zero and change nothing.
import { afterAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { claimQueuedRuns } from "../../src/dispatch/claim-runs";
import { wakeAgent } from "../../src/runs/wake-agent";
import { buildCompany, CONTROLLER, USER_ACTOR } from "../runs/runs-fixture";
import { parseJson, removeTempDirs, runCli, tempDir } from "./helpers";

const db = useTestDatabase();
afterAll(removeTempDirs);

describe("copyback workspace move (issue 23)", () => {
  it("host affinity: refuses while a run of it is running (exit 1, workspace_busy), a missing --to-host is usage; then moves with an activity row", async () => {
    const home = await tempDir("workspace-move");
    const cli = (argv: string[]) => runCli(argv, { databaseUrl: db.url(), copybackHome: home });
    const world = await buildCompany(db.prisma());
    await db.prisma().executionWorkspace.update({ where: { id: world.workspace.id }, data: { hostId: "host-a" } });
    const issue = await world.issue();
    const { runId } = await wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, actor: USER_ACTOR() });
    await claimQueuedRuns(db.prisma(), { limit: 50, controller: CONTROLLER, hostId: "host-a" });
    const argv = ["--json", "workspace", "move", "--workspace", world.workspace.id, "--to-host", "host-b", "--reason", "host A retired"];
    const busy = await cli(argv);
    expect(busy.code).toBe(EXIT.failed);
    expect((parseJson(busy) as unknown as { error: { code: string } }).error.code).toBe("workspace_busy");
    expect((await cli(["workspace", "move", "--workspace", world.workspace.id, "--reason", "x"])).code).toBe(EXIT.usage);
    expect((await db.prisma().executionWorkspace.findUniqueOrThrow({ where: { id: world.workspace.id } })).hostId).toBe("host-a");

    await db.prisma().heartbeatRun.update({ where: { id: runId }, data: { status: "succeeded", finishedAt: new Date() } });
    await db.prisma().nativeRunFinalization.updateMany({ where: { runId }, data: { phase: "committed" } });
    const moved = await cli(argv);
    expect(moved.code).toBe(EXIT.ok);
    expect(parseJson(moved)).toMatchObject({ workspaceId: world.workspace.id, fromHostId: "host-a", toHostId: "host-b" });
    expect(await db.prisma().activityLog.count({ where: { entityId: world.workspace.id, action: "execution_workspace.host_moved" } })).toBe(1);
  });
});
