// The worker as a real process dispatching real runs: the demo seed, a wake on a demo issue, the
// worker claims the run, the Builder agent runs in a local sandbox, its file lands in the host
// workspace and the task moves to review. SIGTERM lets a run in flight finish (drain).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEMO_COMPANY_ID } from "@copyback/db";
import { SYSTEM_ACTOR } from "@copyback/core/records";
import { wakeAgent } from "@copyback/core/runs";
import { useDemoWorkerInstance } from "./worker-child";

const instance = useDemoWorkerInstance("copyback-worker-dispatch-");
const { database } = instance;

const startWorker = () =>
  instance.startWorker({
    WORKER_POLL_INTERVAL_MS: "200",
    WORKER_CONCURRENCY: "2",
    COPYBACK_API_URL: "http://127.0.0.1:3100",
  });

async function waitForRun(runId: string, until: (status: string, codes: string[]) => boolean, output: () => string, timeoutMs = 40_000) {
  const prisma = database.prisma();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    const codes = (await prisma.runEvent.findMany({ where: { runId }, orderBy: { createdAt: "asc" }, select: { code: true } })).map((e) => e.code);
    if (until(run.status, codes)) return { run, codes };
    if (Date.now() > deadline) throw new Error(`run ${runId} stuck in ${run.status}: ${codes.join(", ")}\nworker output:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Settled, and the executor is done with it (the lease release is its last step). */
const settled = (status: string, codes: string[]) =>
  status !== "queued" && status !== "running" && codes.some((code) => code === "lease.released" || code === "lease.release_failed");

describe("the worker dispatches runs", () => {
  it("wakes the demo agent on a demo issue; its file lands in the host workspace and the task moves to review", async () => {
    const prisma = database.prisma();
    const worker = await startWorker();
    const issue = await prisma.issue.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, title: "Document the motor controller API" }, include: { executionWorkspace: true } });
    const started = performance.now();
    const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, actor: SYSTEM_ACTOR });
    const { run, codes } = await waitForRun(runId, settled, worker.output);
    const elapsedMs = performance.now() - started;
    console.log(`[worker e2e] demo run through the worker process (poll 200 ms), wake to ${run.status}: ${elapsedMs.toFixed(0)} ms`);

    expect(run.status).toBe("succeeded");
    expect(run.resultJson).toMatchObject({ finalizationPhase: "committed", outcome: "in_review" });
    expect(codes).toEqual(expect.arrayContaining(["agent.output", "result.accepted", "run.committed", "lease.released"]));
    expect((await prisma.issue.findUniqueOrThrow({ where: { id: issue.id } })).status).toBe("in_review");
    const hostPath = issue.executionWorkspace?.hostPath ?? "";
    expect(await readFile(path.join(hostPath, "notes", "builder.log"), "utf8")).toMatch(/^Built by Builder at /);

    worker.child.kill("SIGTERM");
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect(worker.output()).toContain("worker stopped");
  });

  it("SIGTERM stops claiming and lets the run in flight finish before the worker exits", async () => {
    const prisma = database.prisma();
    const builder = await prisma.agent.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, name: "Builder" } });
    const slow = await prisma.agent.create({
      data: {
        companyId: DEMO_COMPANY_ID,
        name: "Slow builder",
        command: ["/bin/sh", "-c", `sleep 1.5 && echo slow > slow.txt && printf '%s' '{"schema":"copyback.run-result.v1","outcome":"done","summary":"slow"}' > "$COPYBACK_RESULT_FILE"`],
        adapterConfig: { timeoutSeconds: 60 },
        environmentId: builder.environmentId,
      },
    });
    const issue = await prisma.issue.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, title: "Move CI to the new runners" }, include: { executionWorkspace: true } });
    const worker = await startWorker();
    const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, agentId: slow.id, actor: SYSTEM_ACTOR });
    await waitForRun(runId, (_status, codes) => codes.includes("agent.started"), worker.output);
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    const run = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe("succeeded");
    expect(await readFile(path.join(issue.executionWorkspace?.hostPath ?? "", "slow.txt"), "utf8")).toBe("slow\n");
    expect(worker.output()).toContain("draining runs in flight");
  });
});
