// Issue 23 part 1 (host affinity), slice 4, through real worker processes of two host ids on one
// PostgreSQL: each worker heartbeats its worker_hosts row from start and deletes it on SIGTERM; a
// run whose workspace is bound to host A waits ("Waiting for the worker on proc-host-a", counted by
// the metric) while only host B's worker runs, and host A's worker, once started, claims and
// finishes it, and the reason is gone. No REQUIREMENTS id exists for host affinity.
import { describe, expect, it } from "vitest";
import { DEMO_COMPANY_ID } from "@copyback/db";
import { readRunHostWait } from "@copyback/core/deployment";
import { parseExposition, sampleSum } from "@copyback/core/metrics";
import { SYSTEM_ACTOR } from "@copyback/core/records";
import { wakeAgent } from "@copyback/core/runs";
import { freePort, useDemoWorkerInstance, waitUntil } from "./worker-child";

const instance = useDemoWorkerInstance("copyback-worker-host-wait-");
const { database } = instance;

const until = <T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, output: () => string, timeoutMs = 40_000): Promise<T> => waitUntil(what, read, ok, output, timeoutMs);

describe("worker host heartbeat (issue 23)", () => {
  it("host affinity: with only host B's worker running, host A's run waits for host A (API reader and metric); host A's worker claims it and the reason is gone", async () => {
    const prisma = database.prisma();
    const t0 = Date.now();
    const mark = (what: string) => console.log(`[host wait] ${what} at ${Date.now() - t0} ms`);
    const issue = await prisma.issue.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, title: "Document the motor controller API" } });
    await prisma.executionWorkspace.update({ where: { id: issue.executionWorkspaceId ?? "" }, data: { hostId: "proc-host-a" } });

    const metricsPort = await freePort();
    const workerB = await instance.startWorker({ COPYBACK_HOST_ID: "proc-host-b", WORKER_POLL_INTERVAL_MS: "200", WORKER_METRICS: "on", WORKER_METRICS_PORT: String(metricsPort) }, 90_000);
    mark("host B's worker live");
    // The first beat is written before the worker serves its liveness.
    expect(await prisma.workerHost.findMany({ where: { hostId: "proc-host-b" }, select: { pid: true } })).toEqual([{ pid: workerB.child.pid }]);

    const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, actor: SYSTEM_ACTOR });
    // Several claim passes of host B go by (poll 200 ms, and the wake's notification): it stays queued.
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("queued");
    expect(await readRunHostWait(prisma, runId)).toEqual({ code: "waiting_for_host", hostId: "proc-host-a", message: "Waiting for the worker on proc-host-a" });
    const scraped = parseExposition(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
    expect(sampleSum(scraped, "copyback_runs_waiting_for_host", { host: "proc-host-a" })).toBe(1);
    expect(sampleSum(scraped, "copyback_runs_waiting_for_host", { host: "proc-host-b" })).toBe(0);

    mark("host A's run waits, metric scraped");
    const workerA = await instance.startWorker({ COPYBACK_HOST_ID: "proc-host-a", WORKER_POLL_INTERVAL_MS: "200", COPYBACK_API_URL: "http://127.0.0.1:3100" }, 90_000);
    const run = await until(
      "host A's run",
      () => prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId }, select: { status: true, controllerPid: true } }),
      (r) => r.status !== "queued" && r.status !== "running",
      () => workerA.output(),
      120_000,
    );
    mark("host A's worker finished the run");
    expect(run).toEqual({ status: "succeeded", controllerPid: workerA.child.pid });
    expect(await readRunHostWait(prisma, runId)).toBeNull();

    // A graceful stop takes the worker's row away at once (not after the staleness bound).
    workerA.child.kill("SIGTERM");
    workerB.child.kill("SIGTERM");
    expect(await workerA.exitWithin(30_000)).toEqual({ code: 0, signal: null });
    expect(await workerB.exitWithin(30_000)).toEqual({ code: 0, signal: null });
    expect(await prisma.workerHost.count({ where: { hostId: { in: ["proc-host-a", "proc-host-b"] } } })).toBe(0);
    // The machine is shared and loaded: two worker starts and one real run.
  }, 400_000);
});
