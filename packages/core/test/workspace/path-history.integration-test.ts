// Workspace history after real finalizations on a real PostgreSQL: three
// committed runs write, rewrite and delete one path; `copyback workspace history PATH` names them
// newest first (the last writer on top). Every path of a large copyback is found, not only the 500
// its run page record keeps. With 100,000 commits in the table the lookup reads only its path's
// rows through the primary key (the figure is printed; the plan is asserted).
import { rm } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { workspacePathHistory } from "../../src/workspace/path-history";
import { MAX_RECORDED_PATHS, readFinalizeChanges } from "../../src/finalization/finalize-changes";
import { preparedRun, writeTree, type World, useWorld } from "../finalization/finalization-fixture";
import { parseJson, runCli } from "../cli/helpers";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

async function commit(tree: Record<string, string>, remove: string[] = []): Promise<string> {
  const run = await preparedRun(world);
  await writeTree(run.sandbox, tree);
  for (const rel of remove) await rm(path.join(run.sandbox, rel));
  expect(await finalizeRun(world.deps(), { runId: run.runId })).toMatchObject({ kind: "committed" });
  return run.runId;
}

const cli = (argv: string[]) => runCli(argv, { databaseUrl: db.url(), copybackHome: world.instanceRoot });

describe("workspace history", () => {
  it("names the committed runs that wrote, rewrote and deleted a path, newest first, from the CLI", async () => {
    const first = await commit({ "docs/a.md": "one" });
    const second = await commit({ "docs/a.md": "two", "b.txt": "b" });
    const third = await commit({}, ["docs/a.md"]);

    const listed = await cli(["--json", "workspace", "history", path.join(world.hostPath, "docs/a.md")]);
    expect(listed.code).toBe(EXIT.ok);
    const body = parseJson(listed) as unknown as { path: string; entries: { runId: string; change: string }[] };
    expect(body.path).toBe("docs/a.md");
    expect(body.entries.map((e) => [e.runId, e.change])).toEqual([
      [third, "deleted"],
      [second, "written"],
      [first, "written"],
    ]);
    const text = await cli(["workspace", "history", path.join(world.hostPath, "b.txt")]);
    expect(text.code).toBe(EXIT.ok);
    expect(text.stdout).toContain(second);
    expect(text.stdout).not.toContain(first);
    const never = await cli(["workspace", "history", path.join(world.hostPath, "never.txt")]);
    expect(never.stdout).toContain("no committed run wrote or deleted never.txt");
  });

  it("finds every path of a copyback that changed more than the run page record keeps (500 per list)", async () => {
    const tree = Object.fromEntries(Array.from({ length: MAX_RECORDED_PATHS + 100 }, (_, i) => [`many/f-${String(i).padStart(4, "0")}.txt`, `v${i}`]));
    const wide = await commit(tree);
    const last = `many/f-${String(MAX_RECORDED_PATHS + 99).padStart(4, "0")}.txt`;
    const op = await db.prisma().workspaceOperation.findFirstOrThrow({ where: { runId: wide, phase: "workspace_finalize", status: "succeeded" } });
    const record = readFinalizeChanges(op.metadata);
    expect(record.kind === "present" && record.value.truncated && !record.value.written.includes(last)).toBe(true);
    const history = await workspacePathHistory(db.prisma(), { companyId: world.companyId, executionWorkspaceId: world.workspaceId, path: last, limit: 5 });
    expect(history.entries.map((e) => [e.runId, e.change])).toEqual([[wide, "written"]]);
    const removed = await commit({}, [last]);
    const after = await workspacePathHistory(db.prisma(), { companyId: world.companyId, executionWorkspaceId: world.workspaceId, path: last, limit: 5 });
    expect(after.entries.map((e) => [e.runId, e.change])).toEqual([
      [removed, "deleted"],
      [wide, "written"],
    ]);
    // Another company asking for the same workspace id sees nothing.
    const foreign = await workspacePathHistory(db.prisma(), { companyId: "00000000-0000-4000-8000-000000000000", executionWorkspaceId: world.workspaceId, path: last, limit: 5 });
    expect(foreign.entries).toEqual([]);
  });

  it("refuses a path outside every host workspace (exit 1) and an unsafe relative path", async () => {
    const outside = await cli(["--json", "workspace", "history", "/etc/passwd"]);
    expect(outside.code).toBe(EXIT.failed);
    expect((parseJson(outside) as unknown as { error: { code: string } }).error.code).toBe("workspace_not_found");
    await expect(workspacePathHistory(db.prisma(), { companyId: world.companyId, executionWorkspaceId: world.workspaceId, path: "../x", limit: 5 })).rejects.toMatchObject({ code: "workspace_path_invalid" });
  });

  it("with 100,000 commits in the table, one path's lookup reads only that path's rows (primary key)", async () => {
    const prisma = db.prisma();
    const run = await prisma.heartbeatRun.findFirstOrThrow({ where: { companyId: world.companyId } });
    await prisma.$executeRaw`
      WITH ops AS (
        INSERT INTO workspace_operations (id, company_id, run_id, issue_id, phase, status, metadata, started_at, finished_at, created_at)
        SELECT gen_random_uuid(), ${world.companyId}::uuid, ${run.id}::uuid, ${run.nativeIssueId}::uuid, 'workspace_finalize', 'succeeded', '{}'::jsonb,
               now() - g * interval '1 second', now() - g * interval '1 second', now()
        FROM generate_series(1, 100000) AS g
        RETURNING id, finished_at)
      INSERT INTO workspace_path_changes (execution_workspace_id, path, recorded_at, operation_id, company_id, written)
      SELECT ${world.workspaceId}::uuid, p, ops.finished_at, ops.id, ${world.companyId}::uuid, true
      FROM ops CROSS JOIN LATERAL (VALUES ('gen/file-' || ops.id), ('gen/common.txt')) AS v(p)`;
    await prisma.$executeRawUnsafe("ANALYZE workspace_operations");
    await prisma.$executeRawUnsafe("ANALYZE workspace_path_changes");
    for (const [p, expected] of [["docs/a.md", 3], ["gen/common.txt", 20]] as const) {
      const started = performance.now();
      const history = await workspacePathHistory(prisma, { companyId: world.companyId, executionWorkspaceId: world.workspaceId, path: p, limit: 20 });
      const ms = performance.now() - started;
      console.log(`[workspace history] ${p} over ${100_000 + 3} commits: ${ms.toFixed(1)} ms (target < 50 ms)`);
      expect(history.entries).toHaveLength(expected);
    }
    const plan = await prisma.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(
      `EXPLAIN SELECT operation_id FROM workspace_path_changes c WHERE c.execution_workspace_id = $1::uuid AND c.path = $2 ORDER BY c.recorded_at DESC LIMIT 20`,
      world.workspaceId,
      "gen/common.txt",
    );
    expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toContain("workspace_path_changes_pkey");
  });
});
