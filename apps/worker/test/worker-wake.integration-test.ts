// Work finds its worker at once (wake-listener.ts): with the fallback poll set to its maximum
// (10 minutes), a queued run is claimed only because the database announced it on
// copyback_events. A LISTEN connection terminated by the server is reopened and the worker is
// woken again by the next run.
import { describe, expect, it } from "vitest";
import { DEMO_COMPANY_ID } from "@copyback/db";
import { SYSTEM_ACTOR } from "@copyback/core/records";
import { wakeAgent } from "@copyback/core/runs";
import { useDemoWorkerInstance } from "./worker-child";

const instance = useDemoWorkerInstance("copyback-worker-wake-");
const { database } = instance;
// Far longer than any wait below: a run that starts did not wait for the poll.
const POLL_MS = "600000";

async function listenerPids(): Promise<number[]> {
  const rows = await database.prisma().$queryRaw<{ pid: number }[]>`
    SELECT pid FROM pg_stat_activity WHERE application_name = 'copyback-worker-wake' AND datname = current_database()`;
  return rows.map((r) => r.pid);
}

async function until<T>(what: string, probe: () => Promise<T | null>, output: () => string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms\nworker output:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function wakeAndAwaitStart(issueTitle: string, output: () => string): Promise<void> {
  const prisma = database.prisma();
  const issue = await prisma.issue.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, title: issueTitle } });
  const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, actor: SYSTEM_ACTOR });
  await until(`agent.started of run ${runId}`, async () => (await prisma.runEvent.findFirst({ where: { runId, code: "agent.started" } })) ?? null, output);
}

describe("a queued run wakes the worker through LISTEN copyback_events", () => {
  it("is claimed at once though the fallback poll is 10 minutes; after the server terminates the LISTEN connection, the reopened one wakes it again", async () => {
    const worker = await instance.startWorker({ WORKER_POLL_INTERVAL_MS: POLL_MS, WORKER_CONCURRENCY: "2", COPYBACK_API_URL: "http://127.0.0.1:3100" });
    const [first] = await until("the wake listener's connection", async () => ((await listenerPids())[0] !== undefined ? await listenerPids() : null), worker.output);
    // The worker's first pass ran at start and its loop now sleeps for the poll interval.
    await new Promise((r) => setTimeout(r, 500));
    await wakeAndAwaitStart("Document the motor controller API", worker.output);

    await database.prisma().$queryRaw`SELECT pg_terminate_backend(${first}::int)`;
    await until("a new wake listener connection", async () => {
      const pids = await listenerPids();
      return pids.length > 0 && !pids.includes(first!) ? pids : null;
    }, worker.output);
    await new Promise((r) => setTimeout(r, 500));
    const issues = await database.prisma().issue.findMany({ where: { companyId: DEMO_COMPANY_ID, NOT: { title: "Document the motor controller API" }, assigneeAgentId: { not: null }, status: { notIn: ["done", "cancelled"] } }, select: { title: true } });
    expect(issues.length).toBeGreaterThan(0);
    await wakeAndAwaitStart(issues[0]!.title, worker.output);
    expect(worker.output()).toContain("wake listener lost its connection");

    worker.child.kill("SIGTERM");
    expect(await worker.exitWithin(60_000)).toEqual({ code: 0, signal: null });
  }, 120_000);
});
