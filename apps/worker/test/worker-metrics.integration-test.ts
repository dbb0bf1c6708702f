// The worker's Prometheus endpoint after real work: a run of the demo Builder
// on the local provider and a run on the fake provider whose first export fails (retried before
// any host write, R-RR-1), both through the worker process. The scrape after them must show the
// runs committed, the provider calls and the one failure by plugin, the merges with their bytes,
// the directory-merge lock waits, the workspace operation durations and the reconciler's sweeps.
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEMO_COMPANY_ID, seedDemo } from "@copyback/db";
import { useTestDatabase } from "@copyback/db/testing";
import { parseExposition, sampleSum, type Sample } from "@copyback/core/metrics";
import { SYSTEM_ACTOR } from "@copyback/core/records";
import { wakeAgent } from "@copyback/core/runs";
import { freePort, killChildren, startWorkerChild } from "./worker-child";

const database = useTestDatabase();
const children: ChildProcess[] = [];
let instanceRoot = "";

beforeAll(async () => {
  instanceRoot = await mkdtemp(path.join(os.tmpdir(), "copyback-worker-metrics-"));
  await seedDemo(database.prisma(), { instanceRoot });
});
afterEach(() => killChildren(children));
afterAll(async () => {
  await rm(instanceRoot, { recursive: true, force: true });
});

async function scrape(url: string): Promise<Sample[]> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  return parseExposition(await response.text());
}

async function waitForSettled(runId: string, output: () => string, timeoutMs = 60_000): Promise<string> {
  const prisma = database.prisma();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    const released = await prisma.runEvent.count({ where: { runId, code: { in: ["lease.released", "lease.release_failed"] } } });
    if (run.status !== "queued" && run.status !== "running" && released > 0) return run.status;
    if (Date.now() > deadline) throw new Error(`run ${runId} stuck in ${run.status}\nworker output:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the worker's metrics endpoint", () => {
  it("is off unless WORKER_METRICS=on", async () => {
    const port = await freePort();
    await startWorkerChild(children, { DATABASE_URL: database.url(), COPYBACK_HOME: instanceRoot, WORKER_METRICS_PORT: String(port) });
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it("counts real runs, provider calls and failures by plugin, merges, lock waits and sweeps", async () => {
    const prisma = database.prisma();
    const port = await freePort();
    const worker = await startWorkerChild(children, {
      DATABASE_URL: database.url(),
      COPYBACK_HOME: instanceRoot,
      WORKER_POLL_INTERVAL_MS: "200",
      RECONCILE_INTERVAL_MS: "200",
      WORKER_METRICS: "on",
      WORKER_METRICS_PORT: String(port),
      COPYBACK_API_URL: "http://127.0.0.1:3100",
    });
    const url = `http://127.0.0.1:${port}/metrics`;
    expect(worker.output()).toContain(url);
    const before = await scrape(url);
    expect(sampleSum(before, "copyback_database_up")).toBe(1);
    const committedBefore = sampleSum(before, "copyback_runs", { status: "succeeded", phase: "committed" });

    // A real local run: the demo Builder writes notes/builder.log into the host workspace.
    const issue = await prisma.issue.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, title: "Document the motor controller API" } });
    const local = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, actor: SYSTEM_ACTOR });
    expect(await waitForSettled(local.runId, worker.output)).toBe("succeeded");

    // A fake-provider run whose first export fails once: retried before any host write.
    const environment = await prisma.environment.create({
      data: {
        companyId: DEMO_COMPANY_ID,
        name: "Rehearsal (fake)",
        provider: "fake",
        pluginId: "builtin.fake",
        defaultLeasePolicy: "ephemeral",
        config: {
          faults: { fail: { exportWorkspace: 1 } },
          turn: { resultFile: JSON.stringify({ schema: "copyback.run-result.v1", outcome: "in_review", summary: "fake turn" }), files: { "notes/fake.txt": "written by the fake turn\n" } },
        },
      },
    });
    const fakeAgent = await prisma.agent.create({ data: { companyId: DEMO_COMPANY_ID, name: "Fake builder", command: ["/bin/true"], environmentId: environment.id } });
    const other = await prisma.issue.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, title: "Move CI to the new runners" } });
    const fake = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: other.id, agentId: fakeAgent.id, actor: SYSTEM_ACTOR });
    expect(await waitForSettled(fake.runId, worker.output)).toBe("succeeded");

    const after = await scrape(url);
    const delta = (name: string, labels: Record<string, string> = {}) => sampleSum(after, name, labels) - sampleSum(before, name, labels);
    expect(sampleSum(after, "copyback_runs", { status: "succeeded", phase: "committed" })).toBe(committedBefore + 2);
    // The local provider exports through its delta unless the host workspace is empty.
    expect(delta("copyback_provider_calls_total", { plugin: "builtin.local", operation: "exportWorkspace" }) + delta("copyback_provider_calls_total", { plugin: "builtin.local", operation: "exportDelta" })).toBeGreaterThanOrEqual(1);
    expect(delta("copyback_provider_calls_total", { plugin: "builtin.fake", operation: "exportWorkspace" })).toBeGreaterThanOrEqual(2);
    expect(delta("copyback_provider_call_failures_total", { plugin: "builtin.fake", operation: "exportWorkspace", code: "provider_fault_injected" })).toBe(1);
    expect(delta("copyback_provider_call_failures_total", { plugin: "builtin.local" })).toBe(0);
    expect(delta("copyback_merge_duration_seconds_count", { outcome: "applied" })).toBeGreaterThanOrEqual(2);
    expect(delta("copyback_merge_written_bytes_sum")).toBeGreaterThan(0);
    expect(delta("copyback_snapshot_bytes_count")).toBeGreaterThanOrEqual(2);
    expect(delta("copyback_directory_merge_lock_wait_seconds_count", { outcome: "acquired" })).toBeGreaterThanOrEqual(2);
    expect(delta("copyback_workspace_operation_duration_seconds_count", { phase: "workspace_finalize", status: "succeeded" })).toBe(2);
    expect(delta("copyback_workspace_operation_duration_seconds_count", { phase: "workspace_prepare", status: "succeeded" })).toBe(2);
    expect(delta("copyback_reconciler_sweep_duration_seconds_count", { sweep: "finalization" })).toBeGreaterThan(0);
    expect(delta("copyback_reconciler_sweep_batch_size_count", { sweep: "orphans" })).toBeGreaterThan(0);
    expect(sampleSum(after, "process_resident_memory_bytes")).toBeGreaterThan(0);

    const notFound = await fetch(`http://127.0.0.1:${port}/other`);
    expect(notFound.status).toBe(404);
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  });
});
