// Resource limits for local agents with real processes through executeRun:
// an agent that burns CPU, writes a too large file, allocates too much memory or forks too many
// processes fails with agent_resource_limit, the run log says which limit it hit, and its sandbox
// is kept. Under bubblewrap and as a plain process group. Memory and processes use this exec's own
// cgroup where one is writable here (as root: the v1 memory and pids hierarchies on these
// machines); without one they fall back to rlimits, and those tests are skipped with the reason.
import { access } from "node:fs/promises";
import path from "node:path";
import type { Prisma } from "@copyback/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { cgroupParent } from "../../src/providers/local/cgroups";
import { parseLocalConfig } from "../../src/providers/local/config";
import { DispatchWorld, PLAIN_LOCAL_PLUGIN, submitResult, type TaskOptions } from "./dispatch-fixture";

const world = new DispatchWorld(useTestDatabase({ poolSize: 6 }));
beforeAll(() => world.setUp());
afterAll(() => world.tearDown());

const memoryCgroup = (await cgroupParent("memory")) !== null;
const pidsCgroup = (await cgroupParent("pids")) !== null;

async function runWith(limits: Prisma.InputJsonObject, options: TaskOptions) {
  const task = await world.task({ policy: "ephemeral", ...options });
  await world.db.environment.update({ where: { id: task.environmentId }, data: { config: { limits } } });
  const runId = await world.runOnce(task);
  return { task, state: await world.state(runId) };
}

async function expectLimitHit(state: Awaited<ReturnType<typeof runWith>>["state"], kind: string) {
  expect(state.run.status).toBe("failed");
  expect(state.run.errorCode).toBe("agent_resource_limit");
  expect(state.run.errorMessage).toMatch(/limit/);
  const event = state.events.find((e) => e.code === "agent.resource_limit");
  expect(event?.payload).toMatchObject({ hit: kind });
  // Kept: the failed run's lease is stopped and retained, its files still there.
  const lease = state.leases[0];
  expect(lease?.status).not.toBe("destroyed");
  const sandbox = path.join(world.instanceRoot, "sandboxes", `local-${lease?.id}`, "workspace");
  await expect(access(sandbox)).resolves.toBeUndefined();
}

describe.each([
  { name: "under bubblewrap", pluginId: "builtin.local" },
  { name: "as a plain process group", pluginId: PLAIN_LOCAL_PLUGIN },
])("a local agent $name", ({ pluginId }) => {
  it("runs under the default limits, shown in its run log with how each is enforced here", async () => {
    const { state } = await runWith({}, { pluginId, script: submitResult() });
    expect(state.run.status).toBe("succeeded");
    const event = state.events.find((e) => e.code === "agent.limits");
    expect(event?.message).toContain("CPU 3600 s per process (rlimit)");
    expect(event?.message).toContain("file size 4096 MiB (rlimit)");
    expect(event?.message).toContain(`memory 4096 MiB (${memoryCgroup ? "cgroup" : "rlimit"})`);
  });

  it("that burns CPU past limits.cpuSeconds fails with agent_resource_limit (cpu) and keeps its sandbox", async () => {
    const { state } = await runWith({ cpuSeconds: 1 }, { pluginId, script: "while :; do :; done" });
    await expectLimitHit(state, "cpu");
  }, 30_000);

  it("that writes a file past limits.fileSizeMb fails with agent_resource_limit (file_size)", async () => {
    const { state } = await runWith({ fileSizeMb: 1 }, { pluginId, script: `head -c 3000000 /dev/zero > big.bin && ${submitResult()}` });
    await expectLimitHit(state, "file_size");
  });

  it.skipIf(!memoryCgroup)("that allocates past limits.memoryMb fails with agent_resource_limit (memory; the cgroup's OOM kill)", async () => {
    const { state } = await runWith(
      { memoryMb: 64 },
      { pluginId, command: ["node", "-e", "const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1));"] },
    );
    await expectLimitHit(state, "memory");
  }, 30_000);

  it.skipIf(!pidsCgroup)("that forks past limits.processes fails with agent_resource_limit (processes)", async () => {
    const { state } = await runWith({ processes: 8 }, { pluginId, script: `for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 2 & done; wait; ${submitResult()}` });
    await expectLimitHit(state, "processes");
  }, 30_000);
});

describe("limits in the environment's config", () => {
  it("default to the documented values; null turns one off", () => {
    expect(parseLocalConfig({}).limits).toEqual({ cpuSeconds: 3600, memoryMb: 4096, processes: 512, fileSizeMb: 4096 });
    expect(parseLocalConfig({ limits: { cpuSeconds: null } }).limits.cpuSeconds).toBeNull();
  });

  it.each([
    [{ limits: { cpuSeconds: 0 } }, /limits\.cpuSeconds/],
    [{ limits: { memoryMb: "lots" } }, /limits\.memoryMb/],
    [{ limits: { wallSeconds: 5 } }, /limits/],
  ])("refuse %j with provider_config_invalid naming the field, and the run fails before anything starts", async (config, field) => {
    expect(() => parseLocalConfig(config)).toThrow(field);
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, script: "echo ran > ran.txt" });
    await world.db.environment.update({ where: { id: task.environmentId }, data: { config } });
    const state = await world.state(await world.runOnce(task));
    expect(state.run.status).toBe("failed");
    expect(state.run.errorCode).toBe("provider_config_invalid");
    await expect(access(path.join(task.hostPath, "ran.txt"))).rejects.toThrow();
  });
});
