// Fence: `heartbeat_runs.xmin` (FENCES.md row 10, R-ORP-2). The stale actor is the orphan sweep:
// it judged a running run without a result whose controller is dead, found no agent process to
// stop, and writes process_lost. Between its decision and its write the run's row changes without
// any result being accepted (here an agent process is recorded on it), so the durable-result
// re-check passes and the run is still `running`: only the heartbeat's tuple version tells the
// write that the row it judged is not the row it would fail. The interleaving is exact: the sweep's
// row lock waits behind a table lock held by the writer of the change (fences-fixture.ts).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { AGENT_PROCESS_KEY } from "../../src/records/agent-process";
import { probeProcess, readProcessIdentity } from "../../src/process/read-process-identity";
import { orphanSweep } from "../../src/recovery/sweeps/orphan-sweep";
import { claimedRun, type World, useWorld } from "../finalization/finalization-fixture";
import { deadIdentity, selfIdentity } from "../recovery/recovery-fixture";
import { waitForLockWaiters } from "./fences-fixture";
import pg from "pg";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

describe("fence: the heartbeat's xmin", () => {
  it("R-ORP-2: the run's row changed after the orphan sweep judged it (an agent recorded, no result): its conditional write loses; the run keeps running, nothing is pinned, no obligation, the agent lives", async () => {
    const prisma = db.prisma();
    const run = await claimedRun(world);
    const dead = await deadIdentity();
    await prisma.heartbeatRun.update({
      where: { id: run.runId },
      data: { controllerPid: dead.pid, controllerProcessStart: dead.startTime, controllerBootId: dead.bootId, controllerHost: dead.host },
    });
    const sweep = orphanSweep({ db: prisma, controller: await selfIdentity() });
    const [unit] = (await sweep.due(100)).filter((u) => u.runId === run.runId);
    expect(unit).toBeDefined();

    const agent = spawn("sleep", ["1000"], { stdio: "ignore" });
    await once(agent, "spawn");
    try {
      const identity = await readProcessIdentity(agent.pid as number);
      if (!identity) throw new Error("no identity for the agent child");
      // The writer of the change holds heartbeat_runs in EXCLUSIVE mode: the sweep's reads go on,
      // its FOR UPDATE (the conditional write's first statement) waits until the change commits.
      const writer = new pg.Client({ connectionString: db.url(), application_name: "fence-test-agent-record" });
      await writer.connect();
      await writer.query("BEGIN");
      await writer.query("LOCK TABLE heartbeat_runs IN EXCLUSIVE MODE");
      const handled = sweep.handle(unit!);
      try {
        await waitForLockWaiters(db.url(), "heartbeat_runs");
        await writer.query(
          `UPDATE heartbeat_runs SET runner_profile_json = COALESCE(runner_profile_json, '{}'::jsonb) || jsonb_build_object($2::text, $3::jsonb), updated_at = now() WHERE id = $1::uuid`,
          [run.runId, AGENT_PROCESS_KEY, JSON.stringify({ ...identity, recordedAt: new Date().toISOString() })],
        );
        await writer.query("COMMIT");
      } finally {
        await writer.end();
      }
      expect(await handled).toBe("lost_race");

      const after = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
      expect(after).toMatchObject({ status: "running", errorCode: null });
      expect(await prisma.issueRecoveryAction.count({ where: { runId: run.runId } })).toBe(0);
      expect(await prisma.environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } })).toMatchObject({ status: "active" });
      expect((await probeProcess(identity)).kind).toBe("alive");
    } finally {
      agent.kill("SIGKILL");
    }
  });
});
