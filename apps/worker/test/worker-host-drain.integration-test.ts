// Issue 23 (host affinity), the graceful stop through a real worker process: on SIGTERM while an
// agent works, the worker marks its worker_hosts row draining at once and keeps it while the run
// finishes, so the running run does not read "The worker on HOST stopped during this run" (it is
// being finished), while a queued run of that host waits at once ("Waiting for the worker on
// HOST": a draining worker claims no more); once drained, the row is deleted and the worker exits.
// No REQUIREMENTS id exists for host affinity.
import { describe, expect, it } from "vitest";
import { DEMO_COMPANY_ID } from "@copyback/db";
import { readRunHostWait } from "@copyback/core/deployment";
import { SYSTEM_ACTOR } from "@copyback/core/records";
import { wakeAgent } from "@copyback/core/runs";
import { useDemoWorkerInstance, waitUntil } from "./worker-child";

const instance = useDemoWorkerInstance("copyback-worker-host-drain-");
const { database } = instance;
const HOST = "drain-host-a";

const until = <T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, output: () => string, timeoutMs = 60_000): Promise<T> => waitUntil(what, read, ok, output, timeoutMs);

describe("worker host draining (issue 23)", () => {
  it("host affinity: a graceful stop marks the worker's row draining, keeps it while its run finishes (no 'stopped during this run'), the host's queued run waits at once, and the row is deleted once drained", async () => {
    const prisma = database.prisma();
    const t0 = Date.now();
    const mark = (what: string) => console.log(`[host drain] ${what} at ${Date.now() - t0} ms`);
    const builder = await prisma.agent.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, name: "Builder" } });
    // An agent that works for a while after the stop arrives, then exits (no result: the run fails; what matters is that it ran to its end).
    const slow = await prisma.agent.create({
      data: { companyId: DEMO_COMPANY_ID, name: "Slow drainer", environmentId: builder.environmentId, adapterConfig: { timeoutSeconds: 120 }, command: ["/bin/sh", "-c", "sleep 8"] },
    });
    const [first, second] = await prisma.issue.findMany({
      where: { companyId: DEMO_COMPANY_ID, executionWorkspaceId: { not: null }, status: { in: ["todo", "backlog"] } },
      orderBy: { number: "asc" },
      take: 2,
    });
    if (!first || !second) throw new Error("the demo seed has two tasks with a workspace");
    for (const issue of [first, second]) {
      await prisma.executionWorkspace.update({ where: { id: issue.executionWorkspaceId ?? "" }, data: { hostId: HOST } });
      await prisma.issue.update({ where: { id: issue.id }, data: { assigneeAgentId: slow.id } });
    }

    const worker = await instance.startWorker({ COPYBACK_HOST_ID: HOST, WORKER_POLL_INTERVAL_MS: "200", WORKER_DRAIN_TIMEOUT_MS: "90000" }, 90_000);
    mark("worker live");
    const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: first.id, actor: SYSTEM_ACTOR });
    await until(
      "the agent to start",
      () => prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId }, select: { status: true, runnerProfileJson: true } }),
      (run) => run.status === "running" && typeof (run.runnerProfileJson as Record<string, unknown>).agentProcess === "object",
      () => worker.output(),
      90_000,
    );
    mark("agent working");
    expect(await prisma.workerHost.findMany({ where: { hostId: HOST }, select: { pid: true, drainingSince: true } })).toEqual([{ pid: worker.child.pid, drainingSince: null }]);
    expect(await readRunHostWait(prisma, runId)).toBeNull();

    worker.child.kill("SIGTERM");
    const draining = await until("the row to say draining", () => prisma.workerHost.findMany({ where: { hostId: HOST } }), (rows) => rows.length === 1 && rows[0]?.drainingSince != null, () => worker.output(), 30_000);
    mark("row draining");
    // The run is being finished by its worker: it still runs and says nothing about its host.
    expect((await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("running");
    expect(await readRunHostWait(prisma, runId)).toBeNull();
    // A queued run of the host: no worker of it claims any more, so it waits, at once.
    const { runId: queuedId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: second.id, actor: SYSTEM_ACTOR });
    expect(await readRunHostWait(prisma, queuedId)).toEqual({ code: "waiting_for_host", hostId: HOST, message: `Waiting for the worker on ${HOST}` });

    expect(await worker.exitWithin(120_000)).toEqual({ code: 0, signal: null });
    mark("worker exited");
    const ended = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId }, select: { status: true, finishedAt: true } });
    expect(ended.status).not.toBe("running");
    expect(ended.status).not.toBe("queued");
    // The row said draining before the run ended (it was finished by this draining worker), and is gone now.
    expect(draining[0]?.drainingSince?.getTime()).toBeLessThan(ended.finishedAt?.getTime() ?? 0);
    expect(await prisma.workerHost.count({ where: { hostId: HOST } })).toBe(0);
    expect((await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: queuedId } })).status).toBe("queued");
    expect(worker.output()).toContain("worker stopped");
  }, 400_000);
});
