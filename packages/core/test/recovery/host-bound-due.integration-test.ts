// Issue 23 part 1 (host affinity): each host-bound sweep selects only its own host's host-local
// work IN its due query, so a batch can never fill up with another host's due units. With more
// due units of a dead host than the batch size, all older than the one unit of this host, one due
// pass of this host's sweep must still return this host's unit (a filter applied after the bounded
// query returned nothing here, pass after pass, until the dead host's units cleared). Each of the
// host-bound sweeps: finalization, orphans, lease cleanup, settled-run leases, historical unsafe,
// and the reconstruction delivery (bound by its source run's workspace). One real PostgreSQL, two host ids. No REQUIREMENTS id exists for host affinity.
import { describe, expect, it, beforeAll } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import type { ProcessIdentity } from "../../src/process/process-identity";
import { HISTORICAL_UNSAFE_ARCHIVE_CODE } from "../../src/records/coordinator-phases";
import { finalizationSweep } from "../../src/recovery/sweeps/finalization-sweep";
import { historicalUnsafeSweep } from "../../src/recovery/sweeps/historical-unsafe-sweep";
import { leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { orphanSweep } from "../../src/recovery/sweeps/orphan-sweep";
import { reconstructionDeliverySweep } from "../../src/recovery/sweeps/reconstruction-delivery-sweep";
import { settledRunLeasesSweep } from "../../src/recovery/sweeps/settled-run-leases-sweep";
import type { Sweep } from "../../src/recovery/sweeps/sweep";
import { buildCompany, type Company } from "../runs/runs-fixture";
import { deadIdentity, selfIdentity } from "./recovery-fixture";

const db = useTestDatabase();
const BATCH = 2;
const DEAD_HOST = "due-dead-host";
const THIS_HOST = "due-this-host";
let world: Company;
let self: ProcessIdentity;
let dead: ProcessIdentity;
let number = 0;
const noRegistry = { forLease: () => { throw new Error("not called: only due() runs here"); } };

beforeAll(async () => {
  world = await buildCompany(db.prisma());
  self = await selfIdentity();
  dead = await deadIdentity();
});

/** A task in a workspace bound to `hostId`, and a run of it (`status`, recorded controller: a dead process). */
async function runOn(hostId: string, status: "running" | "failed") {
  number += 1;
  const p = db.prisma();
  const ws = await p.executionWorkspace.create({ data: { companyId: world.company.id, name: `due-${number}`, hostPath: `/tmp/due-${number}`, hostId } });
  const issue = await p.issue.create({
    data: { companyId: world.company.id, number: 100 + number, identifier: `ACME-${100 + number}`, title: `Task ${number}`, status: "in_progress", assigneeAgentId: world.agent.id, executionWorkspaceId: ws.id },
  });
  const run = await p.heartbeatRun.create({
    data: {
      companyId: world.company.id, agentId: world.agent.id, nativeIssueId: issue.id, status, runtimeMode: "native",
      controllerPid: dead.pid, controllerProcessStart: dead.startTime, controllerBootId: dead.bootId, controllerHost: dead.host,
      startedAt: new Date(), ...(status === "failed" ? { finishedAt: new Date() } : {}),
    },
  });
  return { runId: run.id, issueId: issue.id, workspaceId: ws.id };
}

/** `count` units of the dead host, each older than the one unit of this host made after them. */
async function dueUnits(make: (hostId: string, age: number) => Promise<string>, count = BATCH + 1): Promise<{ mine: string; theirs: string[] }> {
  const theirs: string[] = [];
  for (let i = 0; i < count; i += 1) theirs.push(await make(DEAD_HOST, 3_600_000 - i * 1000));
  return { theirs, mine: await make(THIS_HOST, 60_000) };
}

const ago = (ms: number) => new Date(Date.now() - ms);

async function expectStarvationFree<U>(on: (hostId: string | undefined) => Sweep<U>, ids: { mine: string; theirs: string[] }) {
  // Without a host the batch is the oldest: all the dead host's.
  const unbound = (await on(undefined).due(BATCH)).map((u) => on(undefined).idOf(u));
  expect(unbound.every((id) => ids.theirs.includes(id))).toBe(true);
  // This host's one due pass takes its own unit, never one of the dead host's.
  const mine = await on(THIS_HOST).due(BATCH);
  expect(mine.map((u) => on(THIS_HOST).idOf(u))).toEqual([ids.mine]);
  // And the dead host's own worker, back, gets a full batch of its units.
  const theirs = (await on(DEAD_HOST).due(BATCH)).map((u) => on(DEAD_HOST).idOf(u));
  expect(theirs).toHaveLength(BATCH);
  expect(theirs.every((id) => ids.theirs.includes(id))).toBe(true);
}

describe("host-bound sweeps select this host's units in their due SQL (issue 23)", () => {
  it("host affinity: the finalization sweep of this host finds its one due run behind more than a batch of a dead host's", async () => {
    const ids = await dueUnits(async (hostId, age) => {
      const run = await runOn(hostId, "running");
      await db.prisma().nativeRunFinalization.create({ data: { companyId: world.company.id, runId: run.runId, issueId: run.issueId, phase: "retryable_failure", nextAttemptAt: ago(age) } });
      return run.runId;
    });
    const deps = { db: db.prisma(), registry: noRegistry, instanceRoot: "/nonexistent", locks: undefined as never, databaseUrl: db.url(), controller: self };
    await expectStarvationFree((hostId) => finalizationSweep({ ...deps, ...(hostId ? { hostId } : {}) }), ids);
    await db.prisma().nativeRunFinalization.updateMany({ where: { runId: { in: [ids.mine, ...ids.theirs] } }, data: { phase: "committed" } });
    // Not orphans for the orphan sweep's test below.
    await db.prisma().heartbeatRun.updateMany({ where: { id: { in: [ids.mine, ...ids.theirs] } }, data: { status: "succeeded", finishedAt: new Date() } });
  });

  it("host affinity: the historical unsafe sweep of this host finds its one due run behind more than a batch of a dead host's", async () => {
    const ids = await dueUnits(async (hostId, age) => {
      const run = await runOn(hostId, "failed");
      await db.prisma().nativeRunFinalization.create({ data: { companyId: world.company.id, runId: run.runId, issueId: run.issueId, phase: "terminal_failure", failureCode: HISTORICAL_UNSAFE_ARCHIVE_CODE } });
      await db.prisma().$executeRaw`UPDATE native_run_finalizations SET updated_at = ${ago(age)} WHERE run_id = ${run.runId}::uuid`;
      return run.runId;
    });
    const deps = { db: db.prisma(), registry: noRegistry, instanceRoot: "/nonexistent", locks: undefined as never, databaseUrl: db.url(), controller: self };
    await expectStarvationFree((hostId) => historicalUnsafeSweep({ ...deps, ...(hostId ? { hostId } : {}) }), ids);
  });

  it("host affinity: the orphan sweep of this host finds its one orphaned run behind more than a batch of a dead host's", async () => {
    const ids = await dueUnits(async (hostId, age) => {
      const run = await runOn(hostId, "running");
      await db.prisma().$executeRaw`UPDATE heartbeat_runs SET updated_at = ${ago(age)} WHERE id = ${run.runId}::uuid`;
      return run.runId;
    });
    // Both hosts' controllers ran on a machine of this name (two containers, one host name).
    const controller = { ...self, host: dead.host };
    await expectStarvationFree((hostId) => orphanSweep({ db: db.prisma(), controller, ...(hostId ? { hostId } : {}) }), ids);
    await db.prisma().heartbeatRun.updateMany({ where: { id: { in: [ids.mine, ...ids.theirs] } }, data: { status: "failed", finishedAt: new Date() } });
  });

  it("host affinity: the lease cleanup sweep of this host finds its one pending local sandbox behind more than a batch of a dead host's", async () => {
    const ids = await dueUnits(async (hostId, age) => {
      const lease = await db.prisma().environmentLease.create({
        data: { companyId: world.company.id, environmentId: world.environment.id, provider: "local", pluginId: "builtin.local", leasePolicy: "ephemeral", status: "pending_cleanup", hostId, nextCleanupAt: ago(age) },
      });
      return lease.id;
    });
    await expectStarvationFree((hostId) => leaseCleanupSweep({ db: db.prisma(), registry: noRegistry, ...(hostId ? { hostId } : {}) }), ids);
    await db.prisma().environmentLease.updateMany({ where: { id: { in: [ids.mine, ...ids.theirs] } }, data: { status: "destroyed" } });
  });

  it("host affinity: the settled-run lease sweep of this host finds its one active local sandbox behind more than a batch of a dead host's", async () => {
    const ids = await dueUnits(async (hostId, age) => {
      const run = await runOn(hostId, "failed");
      const lease = await db.prisma().environmentLease.create({
        data: { companyId: world.company.id, environmentId: world.environment.id, executionWorkspaceId: run.workspaceId, runId: run.runId, issueId: run.issueId, provider: "local", pluginId: "builtin.local", leasePolicy: "ephemeral", status: "active", hostId },
      });
      await db.prisma().$executeRaw`UPDATE environment_leases SET updated_at = ${ago(age)} WHERE id = ${lease.id}::uuid`;
      return lease.id;
    });
    await expectStarvationFree((hostId) => settledRunLeasesSweep({ db: db.prisma(), registry: noRegistry, ...(hostId ? { hostId } : {}) }), ids);
  });

  it("host affinity: the reconstruction delivery sweep of this host finds its one pending intent behind more than a batch of a dead host's", async () => {
    const ids = await dueUnits(async (hostId, age) => {
      const run = await runOn(hostId, "failed");
      const p = db.prisma();
      const lease = await p.environmentLease.create({
        data: { companyId: world.company.id, environmentId: world.environment.id, executionWorkspaceId: run.workspaceId, runId: run.runId, issueId: run.issueId, provider: "local", pluginId: "builtin.local", leasePolicy: "retain_on_failure", status: "destroyed", hostId },
      });
      const action = await p.issueRecoveryAction.create({ data: { companyId: world.company.id, issueId: run.issueId, runId: run.runId, leaseId: lease.id, cause: "native_workspace_file_recovery", fingerprint: `due-${run.runId}`, ownerType: "board" } });
      const intent = await p.reconstructionIntent.create({
        data: {
          companyId: world.company.id, issueId: run.issueId, sourceRunId: run.runId, recoveryActionId: action.id, leaseId: lease.id, attachmentHashes: [], description: "rebuild",
          externalActionOutcomes: [], sourceStatusVersion: 0, requestId: `req-${run.runId}`, createdAt: ago(age),
        },
      });
      return intent.id;
    });
    await expectStarvationFree((hostId) => reconstructionDeliverySweep({ db: db.prisma(), instanceRoot: "/nonexistent", ...(hostId ? { hostId } : {}) }), ids);
  });
});
