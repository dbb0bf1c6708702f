// Run-scoped agent keys through executeRun on the real local provider: the
// worker mints one key per run before the agent starts, the agent finds it in COPYBACK_API_KEY
// (under bubblewrap and as a plain process group), it is stored only as a sha256 bound to the
// run, and it is revoked when the agent's turn is over - whether the run then commits or fails.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { DispatchWorld, PLAIN_LOCAL_PLUGIN, submitResult } from "./dispatch-fixture";

const world = new DispatchWorld(useTestDatabase({ poolSize: 6 }));
beforeAll(() => world.setUp());
afterAll(() => world.tearDown());

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

describe.each([
  { name: "under bubblewrap (when it works here)", pluginId: "builtin.local" },
  { name: "as a plain process group", pluginId: PLAIN_LOCAL_PLUGIN },
])("a local agent $name", ({ pluginId }) => {
  it("gets its own run-scoped key in COPYBACK_API_KEY, stored as a sha256 bound to the run and revoked after its turn (run committed)", async () => {
    const task = await world.task({ pluginId, script: `printf '%s' "$COPYBACK_API_KEY" > key.txt && ${submitResult()}` });
    const runId = await world.runOnce(task);
    const secret = await readFile(path.join(task.hostPath, "key.txt"), "utf8");
    expect(secret).toMatch(/^cba_[A-Za-z0-9_-]{43}$/);
    const keys = await world.db.agentApiKey.findMany({ where: { runId } });
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ keyHash: sha256(secret), agentId: task.agentId, companyId: task.companyId });
    expect(keys[0]?.revokedAt).not.toBeNull();
    expect((await world.state(runId)).run.status).toBe("succeeded");
  });

  it("has its key revoked when the run fails (the agent exits 3 without a result)", async () => {
    const task = await world.task({ pluginId, script: 'test -n "$COPYBACK_API_KEY" && exit 3' });
    const runId = await world.runOnce(task);
    const state = await world.state(runId);
    expect(state.run.status).toBe("failed");
    const keys = await world.db.agentApiKey.findMany({ where: { runId } });
    expect(keys).toHaveLength(1);
    expect(keys[0]?.revokedAt).not.toBeNull();
  });
});

it("each run gets a different key; two runs of one agent never share one", async () => {
  const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, script: submitResult() });
  const first = await world.runOnce(task);
  const second = await world.runOnce(task);
  const keys = await world.db.agentApiKey.findMany({ where: { runId: { in: [first, second] } }, select: { runId: true, keyHash: true } });
  expect(new Set(keys.map((k) => k.runId))).toEqual(new Set([first, second]));
  expect(new Set(keys.map((k) => k.keyHash)).size).toBe(2);
});
