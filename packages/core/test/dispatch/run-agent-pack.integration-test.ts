// R-PV-1 end to end: the agent pack placed and verified in a real local sandbox (real files, real
// sh/find/sha256sum through the provider's exec, real PostgreSQL) before the agent's turn. Faults
// are injected on the verification reads only, by a local provider whose exec answers them
// (a hang past the transport timeout, a transport exception) or whose placement writes other bytes.
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { executeRun } from "../../src/dispatch/execute-run";
import { PACK_VERIFICATION_UNAVAILABLE_CAUSE } from "../../src/records/causes";
import { readPackVerification } from "../../src/records/agent-pack-verification";
import { readPackVerificationUnavailableEvidence } from "../../src/records/actions";
import { VERIFY_ARGV0 } from "../../src/providers/agent-pack/pack-format";
import { createLocalProvider } from "../../src/providers/local/index";
import type { EnvironmentProvider, ExecRequest, ExecResult, LeaseHandle } from "../../src/providers/types";
import { resolveRecoveryAction } from "../../src/recovery/operator/resolve-recovery-action";
import { deriveTaskNotice } from "../../src/recovery/task-notice";
import { findOpenHold, holdRefusal } from "../../src/runs/recovery-hold";
import { SYSTEM_ACTOR } from "../../src/runs/index";
import { stopRun } from "../../src/runs/stop-run";
import { DispatchWorld, submitResult, type Task } from "./dispatch-fixture";

const world = new DispatchWorld(useTestDatabase({ poolSize: 8 }));
const PACK_PLUGIN = "test.local-pack-faults";
let packDir = "";

type Fault = "hang" | "throw" | { abortWorker: AbortController } | { onRead: () => void };
/** What the next verification reads do (in order); an empty queue runs them for real. */
const faults: Fault[] = [];
let verificationExecs = 0;
let tamperPlacement = false;

/** The local provider, with the verification reads and the placement open to faults. */
function faultyLocal(): EnvironmentProvider {
  const base = createLocalProvider({ instanceRoot: world.instanceRoot, pluginId: PACK_PLUGIN, isolation: "none", killGraceMs: 200 });
  return {
    ...base,
    async exec(lease: LeaseHandle, request: ExecRequest): Promise<ExecResult> {
      if (request.argv[3] !== VERIFY_ARGV0) return base.exec!(lease, request);
      verificationExecs += 1;
      const fault = faults.shift();
      if (fault === "throw") throw new Error("socket hang up (injected transport error)");
      // A provider that never answers, not even its abort: only the transport timeout ends it.
      if (fault === "hang") return new Promise<ExecResult>(() => undefined);
      if (fault && "onRead" in fault) {
        // Something happens while this read hangs (a Stop).
        fault.onRead();
        return new Promise<ExecResult>(() => undefined);
      }
      if (fault) {
        // The worker drains in the middle of this read.
        fault.abortWorker.abort();
        return base.exec!(lease, request);
      }
      return base.exec!(lease, request);
    },
    async placeAgentPack(lease, files) {
      if (!tamperPlacement) return base.placeAgentPack!(lease, files);
      // A provider that placed other bytes than it was given (same sizes): only the read can tell.
      const tampered = files.map((file) =>
        file.relativePath === "lib/data.txt" ? { ...file, open: () => Promise.resolve(Readable.from([Buffer.from("X".repeat(file.sizeBytes))])) } : file,
      );
      return base.placeAgentPack!(lease, tampered);
    },
  };
}

beforeAll(async () => {
  await world.setUp();
  world.registry.register(faultyLocal());
  packDir = await mkdtemp(path.join(os.tmpdir(), "copyback-pack-"));
  await mkdir(path.join(packDir, "bin"));
  await mkdir(path.join(packDir, "lib"));
  await writeFile(path.join(packDir, "copyback-pack.json"), JSON.stringify({ schema: "copyback.agent-pack.v1", runtime: "testrt", version: "1.4.2", versionCommand: ["bin/testrt", "--version"] }));
  await writeFile(path.join(packDir, "bin", "testrt"), '#!/bin/sh\necho 1.4.2\n');
  await chmod(path.join(packDir, "bin", "testrt"), 0o755);
  await writeFile(path.join(packDir, "lib", "data.txt"), "runtime data\n");
});
afterAll(async () => {
  await world.tearDown();
  if (packDir) await rm(packDir, { recursive: true, force: true });
});

const agentScript = `"$COPYBACK_AGENT_PACK_DIR/bin/testrt" --version > used-version.txt && ${submitResult()}`;

function packTask(options: { pack?: Record<string, string>; pluginId?: string } = {}): Promise<Task> {
  return world.task({
    pluginId: options.pluginId ?? PACK_PLUGIN,
    script: agentScript,
    adapterConfig: { timeoutSeconds: 60, agentPack: { directory: packDir, version: "1.4.2", ...options.pack } },
  });
}

const noAgent = (s: Awaited<ReturnType<typeof world.state>>) => {
  expect(s.codes).not.toContain("agent.started");
  expect(s.run.runnerProfileJson).not.toHaveProperty("agentProcess");
};

describe("agent-pack verification before the turn", () => {
  it("R-PV-1 a verified pack runs: placed outside the workspace, read in the sandbox, then the agent's turn uses it", async () => {
    verificationExecs = 0;
    const task = await packTask({ pluginId: "builtin.local" });
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run.status).toBe("succeeded");
    expect(s.codes.indexOf("agent_pack.verified")).toBeGreaterThan(-1);
    expect(s.codes.indexOf("agent_pack.verified")).toBeLessThan(s.codes.indexOf("agent.started"));
    expect(await readFile(path.join(task.hostPath, "used-version.txt"), "utf8")).toBe("1.4.2\n");
    // The pack itself is not copied back.
    expect(await readFile(path.join(task.hostPath, "copyback-pack.json"), "utf8").catch(() => null)).toBeNull();
    const record = readPackVerification(s.run.runnerProfileJson);
    expect(record).toMatchObject({ inconclusive: 0, held: null, malformed: false });
    expect(record.reads.map((r) => r.outcome)).toEqual(["verified"]);
  });

  it("R-PV-1 a wrong version reported in the sandbox is incompatible: the run fails, no agent starts, no read is retried", async () => {
    verificationExecs = 0;
    // The runtime reports another version than its manifest (and the agent) says.
    const wrong = await mkdtemp(path.join(os.tmpdir(), "copyback-pack-wrong-"));
    try {
      await writeFile(path.join(wrong, "copyback-pack.json"), JSON.stringify({ schema: "copyback.agent-pack.v1", runtime: "testrt", version: "1.4.2", versionCommand: ["rt"] }));
      await writeFile(path.join(wrong, "rt"), "#!/bin/sh\necho 1.3.9\n");
      await chmod(path.join(wrong, "rt"), 0o755);
      const task = await packTask({ pack: { directory: wrong } });
      const s = await world.state(await world.runOnce(task));
      expect(s.run).toMatchObject({ status: "failed", errorCode: "agent_pack_wrong_version" });
      expect(s.run.errorMessage).toContain('"1.3.9"');
      expect(verificationExecs).toBe(1);
      noAgent(s);
      expect(readPackVerification(s.run.runnerProfileJson).reads.map((r) => [r.outcome, r.reason])).toEqual([["incompatible", "wrong_version"]]);
    } finally {
      await rm(wrong, { recursive: true, force: true });
    }
  });

  it("R-PV-1 a digest mismatch (the sandbox holds other bytes than the controller's copy) is incompatible and starts no agent", async () => {
    verificationExecs = 0;
    tamperPlacement = true;
    try {
      const task = await packTask();
      const s = await world.state(await world.runOnce(task));
      expect(s.run).toMatchObject({ status: "failed", errorCode: "agent_pack_digest_mismatch" });
      expect(verificationExecs).toBe(1);
      noAgent(s);
      expect(await readFile(path.join(task.hostPath, "used-version.txt"), "utf8").catch(() => null)).toBeNull();
    } finally {
      tamperPlacement = false;
    }
  });

  it("R-PV-1 the controller's own copy of another version, or a pinned digest it lacks, fails before any read", async () => {
    verificationExecs = 0;
    const other = await world.state(await world.runOnce(await packTask({ pack: { version: "2.0.0" } })));
    expect(other.run).toMatchObject({ status: "failed", errorCode: "agent_pack_wrong_version" });
    const pinned = await world.state(await world.runOnce(await packTask({ pack: { sha256: "0".repeat(64) } })));
    expect(pinned.run).toMatchObject({ status: "failed", errorCode: "agent_pack_digest_mismatch" });
    expect(verificationExecs).toBe(0);
    noAgent(other);
    noAgent(pinned);
  });

  it("R-PV-1 an unreadable pack and a provider that cannot place one are refused with clear codes", async () => {
    const missing = await world.state(await world.runOnce(await packTask({ pack: { directory: path.join(packDir, "nope") } })));
    expect(missing.run).toMatchObject({ status: "failed", errorCode: "agent_pack_unreadable" });
    noAgent(missing);
    const fake = await world.task({ provider: "fake", adapterConfig: { timeoutSeconds: 60, agentPack: { directory: packDir, version: "1.4.2" } } });
    const unsupported = await world.state(await world.runOnce(fake));
    expect(unsupported.run).toMatchObject({ status: "failed", errorCode: "agent_pack_unsupported" });
    noAgent(unsupported);
  });

  it("R-PV-1 an agent without a pack runs exactly as before (no read, no pack variable)", async () => {
    verificationExecs = 0;
    const task = await world.task({ pluginId: PACK_PLUGIN, script: `printf '%s' "\${COPYBACK_AGENT_PACK_DIR:-none}" > pack.txt && ${submitResult()}` });
    const s = await world.state(await world.runOnce(task));
    expect(s.run.status).toBe("succeeded");
    expect(verificationExecs).toBe(0);
    expect(await readFile(path.join(task.hostPath, "pack.txt"), "utf8")).toBe("none");
    expect(s.codes.filter((code) => code.startsWith("agent_pack."))).toEqual([]);
  });
});

describe("inconclusive reads", () => {
  it("R-PV-1 two inconclusive reads (a timeout, a transport error) hold the run with the cause, a quiet notice and Recovery details; reverify verifies again and the run goes on", async () => {
    verificationExecs = 0;
    faults.push("hang", "throw");
    const task = await packTask();
    const runId = await world.runOnce(task, { deps: { packReadTimeoutMs: 300 } });
    const s = await world.state(runId);
    expect(verificationExecs).toBe(2);
    // Held: back in the queue, its agent never started, the task still its.
    expect(s.run.status).toBe("queued");
    noAgent(s);
    expect(s.issue.executionRunId).toBe(runId);
    expect(s.codes.filter((code) => code.startsWith("agent_pack."))).toEqual(["agent_pack.inconclusive", "agent_pack.inconclusive", "agent_pack.held"]);
    const record = readPackVerification(s.run.runnerProfileJson);
    expect(record.reads.map((r) => r.reason)).toEqual(["timeout", "transport_error"]);
    expect(record.inconclusive).toBe(2);
    // No agent ran: the sandbox was released by policy (ephemeral: destroyed), nothing pinned.
    expect(s.leases.map((lease) => lease.status)).toEqual(["destroyed"]);

    const actions = await world.db.issueRecoveryAction.findMany({ where: { issueId: task.issueId } });
    expect(actions).toHaveLength(1);
    const action = actions[0]!;
    expect(action).toMatchObject({ cause: PACK_VERIFICATION_UNAVAILABLE_CAUSE, status: "active", ownerType: "board", runId, leaseId: null });
    expect(record.held?.actionId).toBe(action.id);
    // Recovery details: the next action and the evidence name the pack and both reads.
    expect(action.nextAction).toContain("reverify");
    expect(action.nextAction).toContain("testrt 1.4.2");
    expect(readPackVerificationUnavailableEvidence(action.evidence)).toMatchObject({ runId, pack: { runtime: "testrt", version: "1.4.2" }, reads: [{ reason: "timeout" }, { reason: "transport_error" }] });
    // The task's quiet notice: no ids, no codes, the run to inspect.
    const notice = deriveTaskNotice([{ id: action.id, cause: action.cause, status: action.status, runId: action.runId, recoveryQueued: false, createdAt: action.createdAt }]);
    expect(notice).toMatchObject({ kind: "attention", runId, message: expect.stringContaining("waiting to start") });
    expect(JSON.stringify(notice.kind === "attention" ? notice.message : "")).not.toMatch(/[0-9a-f]{8}-|runner_remote/);
    // New work is refused while it is held, and the claim skips the held run.
    const hold = await findOpenHold(world.db, task.companyId, task.issueId);
    expect(hold?.cause).toBe(PACK_VERIFICATION_UNAVAILABLE_CAUSE);
    expect(holdRefusal(hold!, "A new run cannot start").code).toBe("recovery_hold_open");
    expect(await world.claim(5)).toEqual([]);

    // A reverify the hold does not accept for another outcome, and one for a wrong run status, write nothing.
    const base = { actionId: action.id, sourceIssueStatus: s.issue.status, companyId: task.companyId, issueId: task.issueId, actor: SYSTEM_ACTOR, note: "Provider API reachable again." };
    await expect(resolveRecoveryAction(world.db, { ...base, outcome: "restored", executionReconciliation: { runId, leaseId: null, runStatus: "queued", noExternalActionsPerformed: false }, workspaceRepairEvidence: { stopEvidence: "x", recoveredFiles: "y" } })).rejects.toMatchObject({ code: "outcome_not_applicable" });
    await expect(resolveRecoveryAction(world.db, { ...base, outcome: "reverify", executionReconciliation: { runId, leaseId: null, runStatus: "running", noExternalActionsPerformed: false } })).rejects.toMatchObject({ code: "run_status_changed" });
    expect(await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } })).toMatchObject({ status: "active" });

    // The operator's reverify: the same run, a fresh budget, claimed again, verified, and its turn runs.
    const resolved = await resolveRecoveryAction(world.db, { ...base, outcome: "reverify", executionReconciliation: { runId, leaseId: null, runStatus: "queued", noExternalActionsPerformed: false } });
    expect(resolved).toMatchObject({ status: "resolved", outcome: "reverify", runId });
    const renewed = readPackVerification((await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).runnerProfileJson);
    expect(renewed).toMatchObject({ inconclusive: 0, held: null, renewals: [{ actionId: action.id }] });
    const claimed = await world.claim(5);
    expect(claimed.map((run) => run.runId)).toEqual([runId]);
    await executeRun(world.deps({ packReadTimeoutMs: 5_000 }), claimed[0]!, new AbortController().signal);
    const after = await world.state(runId);
    expect(after.run.status).toBe("succeeded");
    expect(after.codes).toContain("agent_pack.reverify_requested");
    expect(readPackVerification(after.run.runnerProfileJson).reads.map((r) => r.outcome)).toEqual(["inconclusive", "inconclusive", "verified"]);
    expect(await readFile(path.join(task.hostPath, "used-version.txt"), "utf8")).toBe("1.4.2\n");
  });

  it("R-PV-1 a reattachment after one inconclusive read does not get two more: its next inconclusive read holds the run", async () => {
    verificationExecs = 0;
    // First dispatch: one inconclusive read, then the worker drains in the middle of the retry.
    const drain = new AbortController();
    faults.push("throw", { abortWorker: drain });
    const task = await packTask();
    const runId = await world.runOnce(task, { signal: drain.signal, deps: { packReadTimeoutMs: 5_000 } });
    const first = await world.state(runId);
    expect(verificationExecs).toBe(2);
    expect(first.run.status).toBe("queued");
    expect(first.codes).toContain("run.requeued");
    // The cut read is not counted; the inconclusive one is kept with the run.
    expect(readPackVerification(first.run.runnerProfileJson)).toMatchObject({ inconclusive: 1, held: null });
    noAgent(first);

    // The reattachment: the same run dispatched again gets exactly one read, inconclusive, and is held.
    verificationExecs = 0;
    faults.push("throw", "throw");
    const claimed = await world.claim(5);
    expect(claimed.map((run) => run.runId)).toEqual([runId]);
    await executeRun(world.deps({ packReadTimeoutMs: 5_000 }), claimed[0]!, new AbortController().signal);
    faults.length = 0;
    const second = await world.state(runId);
    expect(verificationExecs).toBe(1);
    expect(second.run.status).toBe("queued");
    expect(readPackVerification(second.run.runnerProfileJson)).toMatchObject({ inconclusive: 2, held: { actionId: expect.any(String) } });
    const actions = await world.db.issueRecoveryAction.findMany({ where: { issueId: task.issueId } });
    expect(actions.map((a) => [a.cause, a.status])).toEqual([[PACK_VERIFICATION_UNAVAILABLE_CAUSE, "active"]]);
    noAgent(second);
  });

  it("R-PV-1 R-RC-7 a Stop during a read that hangs cancels the run at once: the read is not counted and no agent starts", async () => {
    verificationExecs = 0;
    const task = await packTask();
    let runId = "";
    faults.push({ onRead: () => void stopRun(world.db, { companyId: task.companyId, runId, actor: { type: "user", id: null } }) });
    runId = await world.wake(task);
    const claimed = await world.claim(5);
    expect(claimed.map((run) => run.runId)).toEqual([runId]);
    const started = Date.now();
    await executeRun(world.deps({ packReadTimeoutMs: 20_000, stopPollMs: 50 }), claimed[0]!, new AbortController().signal);
    faults.length = 0;
    // Well before the 20 s transport timeout: the Stop ended the read.
    expect(Date.now() - started).toBeLessThan(10_000);
    const s = await world.state(runId);
    expect(s.run.status).toBe("cancelled");
    expect(verificationExecs).toBe(1);
    expect(readPackVerification(s.run.runnerProfileJson).reads).toEqual([]);
    expect(await world.db.issueRecoveryAction.count({ where: { issueId: task.issueId, cause: PACK_VERIFICATION_UNAVAILABLE_CAUSE } })).toBe(0);
    noAgent(s);
  });
});
