// GET /api/metrics through its real route handler: who may read it
// (the metrics token, the trusted local board, instance administrators; not company members,
// agents or anonymous callers, in either mode), and that a real run executed on the local provider
// in this process moves the values it serves.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_COMPANY_ID, seedDemo } from "@copyback/db";
import { useTestDatabase } from "@copyback/db/testing";
import { DirectoryMergeLocks } from "@copyback/core";
import { executeRun, claimQueuedRuns } from "@copyback/core/dispatch";
import { parseExposition, sampleSum } from "@copyback/core/metrics";
import { readProcessIdentity } from "@copyback/core/process";
import { createDefaultRegistry } from "@copyback/core/providers";
import { SYSTEM_ACTOR } from "@copyback/core/records";
import { wakeAgent } from "@copyback/core/runs";
import { GET as metricsGET } from "~/app/api/metrics/route";
import { POST as authPOST } from "~/app/api/auth/[...all]/route";
import { CONSOLE_COOKIE, PASSWORD, SAME_ORIGIN, bearer, buildAuthWorld, configureWebApp, cookieHeaderFrom, disconnectWebApp, insertAgentKey, insertBoardKey, request, type AuthWorld } from "./auth-fixture";

const testDb = useTestDatabase();
const METRICS_TOKEN = "metrics-token-0123456789abcdefghijklmnopqrstuv";
let world: AuthWorld;
let instanceRoot = "";

function configure(mode: "local" | "authenticated") {
  configureWebApp(testDb.url(), mode);
  process.env.COPYBACK_METRICS_TOKEN = METRICS_TOKEN;
}

beforeAll(async () => {
  configure("authenticated");
  world = await buildAuthWorld(testDb.prisma());
  instanceRoot = await mkdtemp(path.join(os.tmpdir(), "copyback-web-metrics-"));
  await seedDemo(testDb.prisma(), { instanceRoot });
});
afterAll(async () => {
  delete process.env.COPYBACK_METRICS_TOKEN;
  await disconnectWebApp();
  if (instanceRoot) await rm(instanceRoot, { recursive: true, force: true });
});

const scrape = (headers: Record<string, string> = {}) => metricsGET(request({ path: "/api/metrics", headers }));

describe("GET /api/metrics", () => {
  it("authenticated mode: anonymous 401, company owners, runtime managers and agents 403, a bad key 401; nothing is rendered for them", async () => {
    configure("authenticated");
    const anonymous = await scrape();
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ code: "unauthenticated" });
    for (const userId of [world.users.owner.id, world.users.manager.id]) {
      const key = await insertBoardKey(testDb.prisma(), world.companyA.id, userId);
      const refused = await scrape(bearer(key.secret));
      expect(refused.status).toBe(403);
      expect(await refused.text()).not.toContain("copyback_runs");
    }
    const agentKey = await insertAgentKey(testDb.prisma(), world.companyA.id, world.a.agent.id);
    expect((await scrape(bearer(agentKey.secret))).status).toBe(403);
    expect(await (await scrape(bearer("cbk_not-a-key"))).json()).toMatchObject({ code: "invalid_api_key" });
    // A near miss of the token is neither the token nor an API key.
    expect((await scrape(bearer(`${METRICS_TOKEN.slice(0, -1)}x`))).status).toBe(401);
  });

  it("local mode: without the console cookie (an agent on the machine) it is refused; the local board reads it", async () => {
    configure("local");
    try {
      const loopback = { host: "127.0.0.1:3100" };
      expect((await scrape(loopback)).status).toBe(401);
      const board = await scrape({ ...loopback, ...CONSOLE_COOKIE });
      expect(board.status).toBe(200);
      expect(await board.text()).toContain("copyback_database_up 1");
    } finally {
      configure("authenticated");
    }
  });

  it("the metrics token and an instance administrator's session read it; a real local run moves what it serves", async () => {
    configure("authenticated");
    const first = await scrape(bearer(METRICS_TOKEN));
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toContain("text/plain");
    const before = parseExposition(await first.text());
    expect(sampleSum(before, "copyback_database_up")).toBe(1);

    // The real work: the demo Builder on the local provider, claimed and executed in this process.
    const prisma = testDb.prisma();
    const controller = await readProcessIdentity(process.pid);
    if (!controller) throw new Error("no /proc identity");
    const issue = await prisma.issue.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, title: "Document the motor controller API" } });
    const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, actor: SYSTEM_ACTOR });
    const [claimed] = await claimQueuedRuns(prisma, { limit: 1, controller });
    expect(claimed?.runId).toBe(runId);
    await executeRun(
      { db: prisma, registry: createDefaultRegistry({ instanceRoot }), instanceRoot, locks: new DirectoryMergeLocks({ instanceRoot }), databaseUrl: testDb.url(), controller, retry: { backoffMs: 0 } },
      claimed!,
      new AbortController().signal,
    );
    expect((await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("succeeded");

    // An instance administrator signs in (a board key never carries instance-wide authority).
    const signIn = await authPOST(request({ path: "/api/auth/sign-in/email", body: { email: world.users.instanceAdmin.email, password: PASSWORD }, headers: { ...SAME_ORIGIN, "x-forwarded-for": "198.51.100.77" } }));
    expect(signIn.status).toBe(200);
    const second = await scrape({ cookie: cookieHeaderFrom(signIn) });
    expect(second.status).toBe(200);
    const after = parseExposition(await second.text());
    const delta = (name: string, labels: Record<string, string> = {}) => sampleSum(after, name, labels) - sampleSum(before, name, labels);
    expect(delta("copyback_runs", { status: "succeeded", phase: "committed" })).toBe(1);
    // The local provider exports through its delta unless the host workspace is empty.
    expect(delta("copyback_provider_calls_total", { plugin: "builtin.local", operation: "exportWorkspace" }) + delta("copyback_provider_calls_total", { plugin: "builtin.local", operation: "exportDelta" })).toBeGreaterThanOrEqual(1);
    expect(delta("copyback_merge_duration_seconds_count", { outcome: "applied" })).toBe(1);
    expect(delta("copyback_workspace_operation_duration_seconds_count", { phase: "workspace_finalize", status: "succeeded" })).toBe(1);
    expect(sampleSum(after, "copyback_live_connections")).toBe(0);
  });
});
