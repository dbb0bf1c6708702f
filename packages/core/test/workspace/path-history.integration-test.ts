// Workspace history (issue 14 section 2) after real finalizations on a real PostgreSQL: three
// committed runs write, rewrite and delete one path; `copyback workspace history PATH` names them
// newest first (the last writer on top). With 100,000 commits in the table the lookup goes
// through the partial GIN index and stays fast (the figure is printed; the plan is asserted).
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { workspacePathHistory } from "../../src/workspace/path-history";
import { buildWorld, preparedRun, writeTree, type World } from "../finalization/finalization-fixture";
import { parseJson, runCli } from "../cli/helpers";

const db = useTestDatabase();
let world: World;

beforeAll(async () => {
  world = await buildWorld(db.prisma(), db.url());
});
afterAll(async () => {
  await world?.cleanup();
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

  it("refuses a path outside every host workspace (exit 1) and an unsafe relative path", async () => {
    const outside = await cli(["--json", "workspace", "history", "/etc/passwd"]);
    expect(outside.code).toBe(EXIT.failed);
    expect((parseJson(outside) as unknown as { error: { code: string } }).error.code).toBe("workspace_not_found");
    await expect(workspacePathHistory(db.prisma(), { companyId: world.companyId, executionWorkspaceId: world.workspaceId, path: "../x", limit: 5 })).rejects.toMatchObject({ code: "workspace_path_invalid" });
  });

  it("with 100,000 commits in the table, one path's lookup goes through the GIN index", async () => {
    const prisma = db.prisma();
    const run = await prisma.heartbeatRun.findFirstOrThrow({ where: { companyId: world.companyId } });
    await prisma.$executeRaw`
      INSERT INTO workspace_operations (id, company_id, run_id, issue_id, phase, status, metadata, started_at, finished_at, created_at)
      SELECT gen_random_uuid(), ${world.companyId}::uuid, ${run.id}::uuid, ${run.nativeIssueId}::uuid, 'workspace_finalize', 'succeeded',
             jsonb_build_object('changes', jsonb_build_object('schema', 'copyback.workspace-finalize-changes.v1', 'written', jsonb_build_array('gen/file-' || g, 'gen/common.txt'), 'deleted', '[]'::jsonb, 'writtenCount', 2, 'deletedCount', 0, 'truncated', false)),
             now() - g * interval '1 second', now() - g * interval '1 second', now()
      FROM generate_series(1, 100000) AS g`;
    await prisma.$executeRawUnsafe("ANALYZE workspace_operations");
    const started = performance.now();
    const history = await workspacePathHistory(prisma, { companyId: world.companyId, executionWorkspaceId: world.workspaceId, path: "docs/a.md", limit: 20 });
    const ms = performance.now() - started;
    console.log(`[workspace history] one path over ${100_000 + 3} commits: ${ms.toFixed(1)} ms (target < 50 ms)`);
    expect(history.entries).toHaveLength(3);
    const plan = await prisma.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(
      `EXPLAIN SELECT id FROM workspace_operations f WHERE f.company_id = $1::uuid AND f.phase = 'workspace_finalize' AND f.status = 'succeeded'
         AND ((f.metadata -> 'changes' -> 'written') ? $2 OR (f.metadata -> 'changes' -> 'deleted') ? $2)`,
      world.companyId,
      "docs/a.md",
    );
    expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toContain("workspace_operations_written_paths");
  });
});
