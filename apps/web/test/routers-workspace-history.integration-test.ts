// workspaces.pathHistory: the run page's link from a written path. A real run
// of the demo Builder on the local provider, executed in this process, writes notes/builder.log;
// the path's history names that run as its last writer. Unsafe paths are refused; another
// company's run reads as not found.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_COMPANY_ID, seedDemo } from "@copyback/db";
import { useTestDatabase } from "@copyback/db/testing";
import { DirectoryMergeLocks } from "@copyback/core";
import { executeRun, claimQueuedRuns } from "@copyback/core/dispatch";
import { readProcessIdentity } from "@copyback/core/process";
import { createDefaultRegistry } from "@copyback/core/providers";
import { SYSTEM_ACTOR } from "@copyback/core/records";
import { wakeAgent } from "@copyback/core/runs";
import { callerFor, configureWebApp, disconnectWebApp, sessionPrincipal } from "./auth-fixture";

const testDb = useTestDatabase();
let instanceRoot = "";

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  instanceRoot = await mkdtemp(path.join(os.tmpdir(), "copyback-web-history-"));
  await seedDemo(testDb.prisma(), { instanceRoot });
});
afterAll(async () => {
  await disconnectWebApp();
  if (instanceRoot) await rm(instanceRoot, { recursive: true, force: true });
});

describe("workspaces.pathHistory", () => {
  it("names the committed run that wrote a path of its workspace; refuses unsafe paths and other companies' runs", async () => {
    const prisma = testDb.prisma();
    const controller = await readProcessIdentity(process.pid);
    if (!controller) throw new Error("no /proc identity");
    const issue = await prisma.issue.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, title: "Document the motor controller API" } });
    const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, actor: SYSTEM_ACTOR });
    const [claimed] = await claimQueuedRuns(prisma, { limit: 1, controller });
    await executeRun(
      { db: prisma, registry: createDefaultRegistry({ instanceRoot }), instanceRoot, locks: new DirectoryMergeLocks({ instanceRoot }), databaseUrl: testDb.url(), controller, retry: { backoffMs: 0 } },
      claimed!,
      new AbortController().signal,
    );
    expect((await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("succeeded");

    const member = await prisma.companyMembership.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, role: "member" } });
    const caller = callerFor(prisma, sessionPrincipal(member.userId, [{ companyId: DEMO_COMPANY_ID, role: "member" }]));
    const history = await caller.workspaces.pathHistory({ companyId: DEMO_COMPANY_ID, runId, path: "notes/builder.log" });
    expect(history.entries).toEqual([expect.objectContaining({ runId, change: "written", issue: expect.objectContaining({ id: issue.id }) })]);
    expect((await caller.workspaces.pathHistory({ companyId: DEMO_COMPANY_ID, runId, path: "never/written.txt" })).entries).toEqual([]);
    await expect(caller.workspaces.pathHistory({ companyId: DEMO_COMPANY_ID, runId, path: "../etc/passwd" })).rejects.toMatchObject({ code: "UNPROCESSABLE_CONTENT" });

    const other = await prisma.company.create({ data: { name: "Elsewhere", issuePrefix: "ELS" } });
    const outsider = callerFor(prisma, sessionPrincipal(member.userId, [{ companyId: other.id, role: "owner" }]));
    await expect(outsider.workspaces.pathHistory({ companyId: other.id, runId, path: "notes/builder.log" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
