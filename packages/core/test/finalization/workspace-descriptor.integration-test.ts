// loadPreparedWorkspace against a real PostgreSQL: the descriptor a second read gets from this
// process's memory (descriptor-cache.ts) is exactly the stored one, a changed row is read and
// parsed again, and no caller's change to a returned value reaches the next one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { loadPreparedWorkspace } from "../../src/finalization/workspace-descriptor";
import { buildWorld, preparedRun, writeTree, type World } from "./finalization-fixture";

const db = useTestDatabase();
let world: World;

beforeAll(async () => {
  world = await buildWorld(db.prisma(), db.url());
});

afterAll(async () => {
  await world?.cleanup();
});

describe("loadPreparedWorkspace", () => {
  it("reads the stored descriptor again, and again in full once the stored one changed", async () => {
    await writeTree(world.hostPath, { "a.txt": "a\n", "d/b.txt": "b\n" });
    const run = await preparedRun(world);
    const key = { companyId: world.companyId, runId: run.runId, issueId: run.issueId };

    const first = await loadPreparedWorkspace(db.prisma(), key);
    expect(first.baseline.entries.map((e) => e.path)).toEqual(["a.txt", "d", "d/b.txt"]);
    const second = await loadPreparedWorkspace(db.prisma(), key);
    expect(second).toEqual(first);
    expect(second).not.toBe(first);
    // A caller's change to what it got stays its own.
    second.excludedPaths.push("changed-by-a-caller");
    second.seed.fingerprint = "changed-by-a-caller";
    expect(await loadPreparedWorkspace(db.prisma(), key)).toEqual(first);

    // The stored descriptor changes (another baseline): the next read has the new one.
    await db.prisma().$executeRaw`
      UPDATE workspace_operations
      SET metadata = jsonb_set(metadata, '{baseline,entries}', (metadata #> '{baseline,entries}') - 0)
      WHERE run_id = ${run.runId}::uuid AND phase = 'workspace_prepare'`;
    const changed = await loadPreparedWorkspace(db.prisma(), key);
    expect(changed.baseline.entries.map((e) => e.path)).toEqual(["d", "d/b.txt"]);

    // And one the parser refuses is refused, not served from memory.
    await db.prisma().$executeRaw`
      UPDATE workspace_operations SET metadata = jsonb_set(metadata, '{hostPath}', '"relative/path"')
      WHERE run_id = ${run.runId}::uuid AND phase = 'workspace_prepare'`;
    await expect(loadPreparedWorkspace(db.prisma(), key)).rejects.toMatchObject({ code: "prepared_workspace_invalid" });
  });
});
