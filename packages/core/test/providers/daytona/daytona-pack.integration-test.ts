// R-PV-1 on Daytona, end to end against the emulator: a run's whole dispatch (real PostgreSQL,
// the real Daytona plugin through the real SDK, the emulator's real files and processes) places
// the agent pack in the sandbox outside the exported tree and reads it back through the
// plugin's exec before the agent's turn. Faults are the emulator's own (a failed exec call, a lost
// reply) or a placement that writes other bytes than it was given (only the read can tell).
import { randomUUID } from "node:crypto";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { readPackVerification } from "../../../src/records/agent-pack-verification";
import { PACK_VERIFICATION_UNAVAILABLE_CAUSE } from "../../../src/records/causes";
import { createDaytonaProvider } from "../../../src/providers/daytona/daytona-provider";
import type { EnvironmentProvider } from "../../../src/providers/types";
import { startDaytonaEmulator, type DaytonaEmulator } from "../../support/daytona/emulator";
import { DispatchWorld, submitResult, type Task } from "../../dispatch/dispatch-fixture";

const world = new DispatchWorld(useTestDatabase({ poolSize: 8 }));
const PLUGIN = "test.daytona-pack";
const KEY_VARIABLE = "DAYTONA_TEST_KEY";
let emulator: DaytonaEmulator;
let emulatorRoot = "";
let packDir = "";
let tamperPlacement = false;
/** Where each placement said the pack is. */
const placed: string[] = [];

function daytonaWithTamper(): EnvironmentProvider {
  const base = createDaytonaProvider({
    instanceRoot: world.instanceRoot,
    pluginId: PLUGIN,
    variables: (name) => (name === KEY_VARIABLE ? emulator.apiKey : undefined),
    backoff: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 50, maxRetryAfterMs: 1_000 },
    lifecycleTimeoutSec: 5,
    transferTimeoutSec: 60,
  });
  return {
    ...base,
    async placeAgentPack(lease, files) {
      if (!tamperPlacement) {
        const answer = await base.placeAgentPack!(lease, files);
        placed.push(answer.directory);
        return answer;
      }
      // Other bytes than the controller's copy (same sizes): the placement's own check passes.
      const tampered = files.map((file) =>
        file.relativePath === "lib/data.txt" ? { ...file, open: () => Promise.resolve(Readable.from([Buffer.from("X".repeat(file.sizeBytes))])) } : file,
      );
      return base.placeAgentPack!(lease, tampered);
    },
  };
}

beforeAll(async () => {
  await world.setUp();
  emulatorRoot = await mkdtemp(path.join(os.tmpdir(), "copyback-daytona-pack-"));
  emulator = await startDaytonaEmulator({ root: path.join(emulatorRoot, "emulator") });
  world.registry.register(daytonaWithTamper());
  packDir = await mkdtemp(path.join(os.tmpdir(), "copyback-pack-"));
  await mkdir(path.join(packDir, "bin"));
  await mkdir(path.join(packDir, "lib"));
  await writeFile(path.join(packDir, "copyback-pack.json"), JSON.stringify({ schema: "copyback.agent-pack.v1", runtime: "testrt", version: "1.4.2", versionCommand: ["bin/testrt", "--version"] }));
  await writeFile(path.join(packDir, "bin", "testrt"), "#!/bin/sh\necho 1.4.2\n");
  await chmod(path.join(packDir, "bin", "testrt"), 0o755);
  await writeFile(path.join(packDir, "lib", "data.txt"), "runtime data\n");
}, 60_000);
afterAll(async () => {
  await emulator?.close();
  await world.tearDown();
  for (const dir of [emulatorRoot, packDir]) if (dir) await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  emulator.faults.clear();
  tamperPlacement = false;
  placed.length = 0;
});

async function packTask(): Promise<Task> {
  const environment = await world.db.environment.create({
    data: {
      companyId: world.companyId,
      name: `daytona-${randomUUID()}`,
      provider: "daytona",
      pluginId: PLUGIN,
      defaultLeasePolicy: "ephemeral",
      config: { apiUrl: emulator.apiUrl, apiKeyEnv: KEY_VARIABLE },
    },
  });
  return world.task({
    environmentId: environment.id,
    files: { "notes.txt": "the task's file\n" },
    // The agent uses the runtime and tells where it found it and the modes of its files.
    script: [
      `"$COPYBACK_AGENT_PACK_DIR/bin/testrt" --version > used-version.txt`,
      `printf '%s\n%s %s' "$COPYBACK_AGENT_PACK_DIR" "$(ls -l "$COPYBACK_AGENT_PACK_DIR/bin/testrt" | cut -c1-10)" "$(ls -l "$COPYBACK_AGENT_PACK_DIR/lib/data.txt" | cut -c1-10)" > pack-dir.txt`,
      submitResult(),
    ].join(" && "),
    adapterConfig: { timeoutSeconds: 60, agentPack: { directory: packDir, version: "1.4.2" } },
  });
}

const noAgent = (s: Awaited<ReturnType<typeof world.state>>) => {
  expect(s.codes).not.toContain("agent.started");
  expect(s.run.runnerProfileJson).not.toHaveProperty("agentProcess");
};

describe("agent-pack verification on Daytona (emulator)", { timeout: 120_000 }, () => {
  it("R-PV-1 a verified pack runs on Daytona: placed beside the exported workspace, read in the sandbox through exec, then the agent's turn uses it", async () => {
    const task = await packTask();
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run.status).toBe("succeeded");
    expect(s.codes.indexOf("agent_pack.verified")).toBeGreaterThan(-1);
    expect(s.codes.indexOf("agent_pack.verified")).toBeLessThan(s.codes.indexOf("agent.started"));
    // The agent ran the placed runtime, and its output came back; the pack itself did not.
    expect(await readFile(path.join(task.hostPath, "used-version.txt"), "utf8")).toBe("1.4.2\n");
    expect(await readFile(path.join(task.hostPath, "copyback-pack.json"), "utf8").catch(() => null)).toBeNull();
    expect(await readFile(path.join(task.hostPath, "bin", "testrt"), "utf8").catch(() => null)).toBeNull();
    expect(await readFile(path.join(task.hostPath, "notes.txt"), "utf8")).toBe("the task's file\n");
    expect(readPackVerification(s.run.runnerProfileJson).reads.map((r) => r.outcome)).toEqual(["verified"]);
    // The agent saw the pack at copyback/pack of its sandbox, beside the workspace, not in it.
    const seen = (await readFile(path.join(task.hostPath, "pack-dir.txt"), "utf8")).split("\n");
    expect(seen[0]).toMatch(new RegExp(`^${path.join(emulatorRoot, "emulator")}/[^/]+/copyback/pack$`));
    expect(seen[1]).toBe("-r-x------ -r--------");
    expect(placed).toEqual([seen[0]]);
  });

  it("R-PV-1 a digest mismatch read in the Daytona sandbox is incompatible: the run fails, no agent starts, no read is retried", async () => {
    tamperPlacement = true;
    const task = await packTask();
    const s = await world.state(await world.runOnce(task));
    expect(s.run).toMatchObject({ status: "failed", errorCode: "agent_pack_digest_mismatch" });
    noAgent(s);
    expect(readPackVerification(s.run.runnerProfileJson).reads.map((r) => [r.outcome, r.reason])).toEqual([["incompatible", "digest_mismatch"]]);
    expect(await readFile(path.join(task.hostPath, "used-version.txt"), "utf8").catch(() => null)).toBeNull();
  });

  it("R-PV-1 two exec transport faults on Daytona (a failed call, a lost reply) are inconclusive and hold the run: no agent, the cause on the task", async () => {
    // The next two session commands are the two verification reads (the placement uses plain commands).
    emulator.faults.once({ op: "session-exec", kind: "status", status: 503, message: "injected" });
    emulator.faults.once({ op: "session-exec", kind: "lost_reply" });
    const task = await packTask();
    const runId = await world.runOnce(task, { deps: { packReadTimeoutMs: 3_000 } });
    const s = await world.state(runId);
    expect(emulator.faults.pending()).toEqual([]);
    expect(s.run.status).toBe("queued");
    noAgent(s);
    expect(s.codes.filter((code) => code.startsWith("agent_pack."))).toEqual(["agent_pack.inconclusive", "agent_pack.inconclusive", "agent_pack.held"]);
    const record = readPackVerification(s.run.runnerProfileJson);
    expect(record.inconclusive).toBe(2);
    expect(record.reads.map((r) => r.outcome)).toEqual(["inconclusive", "inconclusive"]);
    const actions = await world.db.issueRecoveryAction.findMany({ where: { issueId: task.issueId } });
    expect(actions.map((a) => [a.cause, a.status, a.runId])).toEqual([[PACK_VERIFICATION_UNAVAILABLE_CAUSE, "active", runId]]);
    expect(await world.claim(5)).toEqual([]);
    // No agent ran: the sandbox was released by policy (ephemeral: destroyed).
    expect(s.leases.map((lease) => lease.status)).toEqual(["destroyed"]);
  });
});
