// The worker as a real process, SIGKILLed while its agent works (R-FO-1):
// after a restart the orphaned agent is stopped by PID + start time (a plain process group keeps
// writing after its worker is gone; under bubblewrap it died with its parent), the run fails
// `process_lost`, the sandbox with the agent's partial file is stopped and retained (never
// destroyed, never reused), and exactly one file-recovery obligation names the run, its lease and
// its allocation; the task shows one compact "needs an operator" notice.
import type { ChildProcess } from "node:child_process";
import { readFile, rm, stat } from "node:fs/promises";
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEMO_COMPANY_ID, seedDemo } from "@copyback/db";
import { useTestDatabase } from "@copyback/db/testing";
import {
  FILE_RECOVERY_CAUSE,
  readFileRecoveryEvidence,
  SYSTEM_ACTOR,
} from "@copyback/core/records";
import { deriveTaskNotice, listOpenActionsForIssue, toNoticeAction } from "@copyback/core/recovery";
import { probeProcess, processGroupMembers } from "@copyback/core/process";
import { wakeAgent } from "@copyback/core/runs";
import { killChildren, startWorkerChild } from "./worker-child";

const database = useTestDatabase();
const children: ChildProcess[] = [];
let instanceRoot = "";
const stray: number[] = [];

beforeAll(async () => {
  instanceRoot = await mkdtemp(path.join(os.tmpdir(), "copyback-worker-orphan-"));
  await seedDemo(database.prisma(), { instanceRoot });
});
afterEach(() => {
  killChildren(children);
  // Never leave an agent group behind if an assertion failed before the recovery stopped it.
  for (const pgid of stray.splice(0)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // gone
    }
  }
});
afterAll(async () => {
  await rm(instanceRoot, { recursive: true, force: true });
});

const startWorker = (isolation: "none" | "auto") =>
  startWorkerChild(children, {
    DATABASE_URL: database.url(),
    COPYBACK_HOME: instanceRoot,
    COPYBACK_LOCAL_ISOLATION: isolation,
    WORKER_POLL_INTERVAL_MS: "100",
    RECONCILE_INTERVAL_MS: "250",
    WORKER_CONCURRENCY: "2",
  });

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** A demo task assigned to an agent that appends a line to work/partial.txt every 50 ms, for ever, and never submits. */
async function endlessWriter(name: string, title: string) {
  const prisma = database.prisma();
  const builder = await prisma.agent.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, name: "Builder" } });
  const agent = await prisma.agent.create({
    data: {
      companyId: DEMO_COMPANY_ID,
      name,
      environmentId: builder.environmentId,
      adapterConfig: { timeoutSeconds: 300 },
      command: ["/bin/sh", "-c", `mkdir -p work; i=0; while true; do echo "line $i" >> work/partial.txt; i=$((i+1)); sleep 0.05; done`],
    },
  });
  const issue = await prisma.issue.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, title } });
  await prisma.issue.update({ where: { id: issue.id }, data: { assigneeAgentId: agent.id } });
  return issue;
}

type Recorded = { pid: number; startTime: string; bootId: string; host: string };

async function killWorkerWhileAgentWrites(isolation: "none" | "auto", name: string, title: string) {
  const prisma = database.prisma();
  const issue = await endlessWriter(name, title);
  const first = await startWorker(isolation);
  const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, actor: SYSTEM_ACTOR });
  const agent = await until(
    "the agent's recorded process",
    async () => ((await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).runnerProfileJson as { agentProcess?: Recorded }).agentProcess,
    60_000,
  );
  stray.push(agent.pid);
  const lease = await prisma.environmentLease.findFirstOrThrow({ where: { runId } });
  const partial = path.join(instanceRoot, "sandboxes", lease.providerLeaseId ?? "", "workspace", "work", "partial.txt");
  await until("the agent's partial file", async () => (await stat(partial).catch(() => null))?.size, 30_000);
  first.child.kill("SIGKILL");
  await first.exited;
  return { issue, runId, agent, lease, partial };
}

async function expectRecovered(runId: string, issueId: string, leaseId: string, partial: string) {
  const prisma = database.prisma();
  const run = await until("process_lost", async () => {
    const r = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    return r.status === "failed" ? r : null;
  }, 60_000);
  expect(run.errorCode).toBe("process_lost");
  // The lease: stopped and retained with a confirmed receipt (the cleanup sweep continued the pin).
  const lease = await until("the lease stopped and retained", async () => {
    const l = await prisma.environmentLease.findUniqueOrThrow({ where: { id: leaseId } });
    return l.status === "released" ? l : null;
  }, 60_000);
  expect(lease.metadata).toMatchObject({ sandboxStopAndRetainReceipt: { method: "environmentStopLease", providerLeaseId: lease.providerLeaseId } });
  // The partial file is kept, and nothing writes to it any more.
  const kept = await readFile(partial, "utf8");
  expect(kept).toMatch(/^line 0\n/);
  await new Promise((r) => setTimeout(r, 500));
  expect(await readFile(partial, "utf8")).toBe(kept);
  // A few more reconciler passes: still exactly one obligation, no new run, no destroy.
  await new Promise((r) => setTimeout(r, 1_000));
  const actions = await prisma.issueRecoveryAction.findMany({ where: { runId } });
  expect(actions).toHaveLength(1);
  expect(actions[0]).toMatchObject({ cause: FILE_RECOVERY_CAUSE, status: "active", ownerType: "board", leaseId });
  expect(await prisma.heartbeatRun.count({ where: { nativeIssueId: issueId } })).toBe(1);
  expect((await prisma.environmentLease.findUniqueOrThrow({ where: { id: leaseId } })).status).toBe("released");
  const notice = deriveTaskNotice((await listOpenActionsForIssue(prisma, DEMO_COMPANY_ID, issueId)).map(toNoticeAction));
  expect(notice).toMatchObject({ kind: "attention", runId, cause: FILE_RECOVERY_CAUSE });
  return { evidence: readFileRecoveryEvidence(actions[0]!.evidence), lease };
}

describe("a worker SIGKILLed while its agent works", () => {
  it("R-FO-1 a plain process group (no bubblewrap): the restarted worker stops the orphaned agent by PID + start time, fails the run process_lost, keeps the sandbox with the partial file and opens exactly one obligation", { timeout: 180_000 }, async () => {
    const { issue, runId, agent, lease, partial } = await killWorkerWhileAgentWrites("none", "Endless writer", "Add a health check endpoint");
    expect((await database.prisma().runEvent.findFirstOrThrow({ where: { runId, code: "lease.acquired" } })).payload).toMatchObject({ isolated: false });
    // The worker is gone; its agent is not, and it keeps writing.
    expect((await probeProcess(agent)).kind).toBe("alive");
    const sizeAtKill = (await stat(partial)).size;
    await until("the orphaned agent writing on", async () => (await stat(partial)).size > sizeAtKill, 10_000);

    const second = await startWorker("none");
    const { evidence } = await expectRecovered(runId, issue.id, lease.id, partial);
    expect((await probeProcess(agent)).kind).toBe("dead");
    expect(await processGroupMembers(agent.pid)).toEqual([]);
    expect(evidence).toMatchObject({
      runId,
      leaseId: lease.id,
      providerLeaseId: lease.providerLeaseId,
      origin: "controller_lost",
      failureCode: "process_lost",
      agentStop: "stopped",
      agentProcess: { pid: agent.pid, startTime: agent.startTime },
      pin: "pinned",
    });
    second.child.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });

  it("R-FO-1 under bubblewrap the agent died with its parent: nothing is left to stop; the run fails process_lost, the sandbox with the partial file is kept and exactly one obligation names the run", { timeout: 180_000 }, async () => {
    const { issue, runId, agent, lease, partial } = await killWorkerWhileAgentWrites("auto", "Endless writer 2", "Draft release notes for 0.2");
    expect((await database.prisma().runEvent.findFirstOrThrow({ where: { runId, code: "lease.acquired" } })).payload).toMatchObject({ isolated: true });
    // --die-with-parent: bubblewrap and everything in its PID namespace go with the worker.
    await until("the sandbox to die with its parent", async () => (await probeProcess(agent)).kind === "dead", 10_000);
    const second = await startWorker("auto");
    const { evidence } = await expectRecovered(runId, issue.id, lease.id, partial);
    expect(evidence).toMatchObject({ runId, leaseId: lease.id, origin: "controller_lost", agentStop: "not_running", pin: "pinned" });
    second.child.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });
});
