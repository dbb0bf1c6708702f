// Issue 23 part 1 (host affinity): `copyback workspace history` matches only this host's (and
// unbound) workspaces. A path inside a workspace bound to another host is refused with
// workspace_on_other_host (exit 1), naming that host, instead of answering that workspace's
// history for a file of this host's disk; on the workspace's own host it answers. Two host ids
// (each instance root's host-id file) on one real PostgreSQL. No REQUIREMENTS id exists for host affinity.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { HOST_ID_FILE } from "../../src/deployment/host-id";
import { EXIT } from "../../src/cli/exit-codes";
import { buildCompany } from "../runs/runs-fixture";
import { parseJson, removeTempDirs, runCli, tempDir } from "./helpers";

const db = useTestDatabase();
afterAll(removeTempDirs);

async function homeOf(hostId: string): Promise<string> {
  const home = await tempDir(`history-${hostId}`);
  await writeFile(path.join(home, HOST_ID_FILE), `${hostId}\n`);
  return home;
}

describe("copyback workspace history on many hosts (issue 23)", () => {
  it("host affinity: a path inside another host's workspace is refused workspace_on_other_host; on its own host the history answers", async () => {
    const world = await buildCompany(db.prisma());
    const dir = await tempDir("history-ws");
    await mkdir(path.join(dir, "docs"));
    await writeFile(path.join(dir, "docs", "a.md"), "here");
    await db.prisma().executionWorkspace.create({ data: { companyId: world.company.id, name: "bound-to-a", hostPath: dir, hostId: "hist-a" } });
    const target = path.join(dir, "docs", "a.md");

    const onB = await runCli(["--json", "workspace", "history", target], { databaseUrl: db.url(), copybackHome: await homeOf("hist-b") });
    expect(onB.code).toBe(EXIT.failed);
    const error = (parseJson(onB) as unknown as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("workspace_on_other_host");
    expect(error.message).toContain("hist-a");

    const onA = await runCli(["--json", "workspace", "history", target], { databaseUrl: db.url(), copybackHome: await homeOf("hist-a") });
    expect(onA.code).toBe(EXIT.ok);
    expect(parseJson(onA)).toMatchObject({ workspace: { name: "bound-to-a" }, path: "docs/a.md" });
  });
});
