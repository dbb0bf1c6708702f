// The export-only retry end to end on a real PostgreSQL and the real local provider
// (R-EX-2, R-EX-3, R-EX-5, R-DT-2): an agent's turn really runs in a local sandbox, its
// exports fail three coordinator attempts (the export of a local plugin that fails on demand),
// the run is held with its sandbox stopped and retained; the operator's retry resumes exactly that
// sandbox, verifies it and the same run commits its exact files. No new run, no wake.
import { access, readdir, readFile, rename } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDedicatedConnection } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import { DomainError } from "../../src/errors";
import { finalizationLockKey } from "../../src/finalization/finalization-owner";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { leaseOutcomeAfterFinalize } from "../../src/finalization/finalize-outcome-policy";
import { readStopReceipt } from "../../src/leases/lease-metadata";
import { releaseLeaseByPolicy } from "../../src/leases/release-lease";
import { lostReply } from "../../src/providers/fake/faults";
import { createLocalProvider } from "../../src/providers/local/index";
import type { EnvironmentProvider } from "../../src/providers/types";
import { readExportRetry } from "../../src/records/actions-export-retry";
import { EXPORT_RETRY_EXHAUSTED_CAUSE } from "../../src/records/causes";
import { retryWorkspaceExport, type RetryWorkspaceExportInput } from "../../src/recovery/operator/retry-workspace-export";
import { DispatchWorld, RESULT_DONE, submitResult, type Task } from "../dispatch/dispatch-fixture";

const database = useTestDatabase({ poolSize: 8 });
const world = new DispatchWorld(database);
const FAULTY = "test.local-faulty";
/** What the faulty local plugin does next (set by each test). */
const faults = { exportFailures: 0, resumeLostReplies: 0, inspectFailuresAfterResume: 0, resumes: 0, armedAtResume: 0, duringResume: null as null | (() => Promise<unknown>), onExport: null as null | (() => Promise<void>) };

beforeAll(async () => {
  await world.setUp();
  const base = createLocalProvider({ instanceRoot: world.instanceRoot, pluginId: FAULTY, isolation: "none", killGraceMs: 500 });
  const faulty: EnvironmentProvider = {
    ...base,
    async exportWorkspace(lease, options) {
      await faults.onExport?.();
      if (faults.exportFailures > 0) {
        faults.exportFailures -= 1;
        throw new DomainError("unavailable", "provider_export_failed", "The sandbox's export transport did not answer.");
      }
      return base.exportWorkspace!(lease, options);
    },
    // The delta export is an export too: the same transport fault fails it.
    async exportDelta(lease, request) {
      await faults.onExport?.();
      if (faults.exportFailures > 0) {
        faults.exportFailures -= 1;
        throw new DomainError("unavailable", "provider_export_failed", "The sandbox's export transport did not answer.");
      }
      return base.exportDelta!(lease, request);
    },
    async resume(lease, expected) {
      faults.resumes += 1;
      const identity = await base.resume!(lease, expected);
      const during = faults.duringResume;
      faults.duringResume = null;
      if (during) await during();
      if (faults.resumeLostReplies > 0) {
        faults.resumeLostReplies -= 1;
        throw lostReply("resume");
      }
      return identity;
    },
    async inspect(lease) {
      // Only a probe that follows a resume made after the fault was armed fails.
      if (faults.inspectFailuresAfterResume > 0 && faults.resumes > faults.armedAtResume) {
        faults.inspectFailuresAfterResume -= 1;
        throw new DomainError("unavailable", "provider_probe_failed", "The probe of the sandbox timed out.");
      }
      return base.inspect!(lease);
    },
  };
  world.registry.register(faulty);
});
afterAll(() => world.tearDown());

const sandboxRoot = (providerLeaseId: string) => path.join(world.instanceRoot, "sandboxes", providerLeaseId);
const exists = (p: string) => access(p).then(() => true, () => false);

/** A task whose agent edits files and submits `done`, on the faulty local plugin. */
async function doneTask(policy: "reuse_by_environment" | "ephemeral"): Promise<Task> {
  return world.task({
    provider: "local",
    pluginId: FAULTY,
    policy,
    files: { "a.txt": "host a\n", "old.txt": "old\n" },
    script: `printf 'agent edit\\n' > a.txt && mkdir -p src && printf 'new file\\n' > src/new.txt && rm old.txt && ${submitResult(RESULT_DONE)}`,
  });
}

/** Runs the task's turn and spends the export budget: the third coordinator attempt exhausts it (R-EX-1). */
async function exhaustedRun(policy: "reuse_by_environment" | "ephemeral") {
  const task = await doneTask(policy);
  faults.exportFailures = 1_000;
  const runId = await world.runOnce(task);
  for (let i = 0; i < 3; i += 1) {
    const coordinator = await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } });
    if (coordinator.phase !== "retryable_failure") break;
    const at = new Date((coordinator.nextAttemptAt ?? new Date()).getTime() + 1);
    const outcome = await finalizeRun({ ...world.deps(), now: () => at }, { runId });
    const release = leaseOutcomeAfterFinalize(outcome);
    const [lease] = await world.db.environmentLease.findMany({ where: { runId } });
    if (release && lease) await releaseLeaseByPolicy(world.db, world.registry, { leaseId: lease.id, runId, outcome: release });
  }
  faults.exportFailures = 0;
  const state = await world.state(runId);
  expect(state.coordinator).toMatchObject({ phase: "terminal_failure", failureCode: "native_workspace_sync_out_retry_exhausted" });
  expect(state.run.status).toBe("failed");
  const lease = state.leases[0]!;
  // Stopped and retained with a confirmed receipt, its files untouched.
  expect(lease.status).toBe("released");
  expect(readStopReceipt(lease.metadata).kind).toBe("present");
  const action = await world.db.issueRecoveryAction.findFirstOrThrow({ where: { runId, cause: EXPORT_RETRY_EXHAUSTED_CAUSE, status: "active" } });
  const input: RetryWorkspaceExportInput = {
    companyId: task.companyId,
    issueId: task.issueId,
    actionId: action.id,
    runId,
    repairNote: "Restored the transport; the sandbox's files were left as they are.",
    actor: { type: "user", id: null },
  };
  return { task, runId, lease, action, input };
}

const HOST_AFTER = { "a.txt": { type: "file", content: "agent edit\n" }, src: { type: "dir" }, "src/new.txt": { type: "file", content: "new file\n" } };

/** Everything an admission could write: a refusal must leave all of it byte for byte. */
async function written(runId: string, leaseId: string, actionId: string) {
  const db = world.db;
  return JSON.stringify({
    run: await db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } }),
    coordinator: await db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } }),
    lease: await db.environmentLease.findUniqueOrThrow({ where: { id: leaseId } }),
    action: await db.issueRecoveryAction.findUniqueOrThrow({ where: { id: actionId } }),
    events: await db.runEvent.count({ where: { runId } }),
    activity: await db.activityLog.count({ where: { entityId: actionId } }),
  });
}

const deps = (finalize = true) => ({ db: world.db, registry: world.registry, ...(finalize ? { finalize: world.deps() } : {}) });

describe("export-only retry on the local provider", () => {
  it("R-EX-2: a re-admitted finalization's staging name is higher than every earlier attempt's (re-admission resets the attempt count, never the staging sequence)", async () => {
    // Every export lists the finalization staging directories present at that moment: each
    // attempt's own `<runId>-<n>` exists while it exports.
    const seen: { phase: "before" | "readmitted"; names: string[] }[] = [];
    let phase: "before" | "readmitted" = "before";
    faults.onExport = async () => {
      seen.push({ phase, names: await readdir(path.join(world.instanceRoot, "staging")).catch(() => [] as string[]) });
    };
    try {
      const { runId, input } = await exhaustedRun("reuse_by_environment");
      phase = "readmitted";
      const result = await retryWorkspaceExport(deps(), input);
      expect(result).toMatchObject({ status: "readmitted", finalization: { outcome: "committed" } });
      const numbers = (which: "before" | "readmitted") =>
        [...new Set(seen.filter((s) => s.phase === which).flatMap((s) => s.names.flatMap((name) => (name.startsWith(`${runId}-`) ? [Number(name.slice(runId.length + 1))] : []))))];
      const earlier = numbers("before");
      const readmitted = numbers("readmitted");
      // Each earlier attempt had its own number; the re-admitted attempt's is above all of them.
      expect(earlier.length).toBeGreaterThanOrEqual(3);
      expect(readmitted).toHaveLength(1);
      expect(readmitted[0]).toBeGreaterThan(Math.max(...earlier));
    } finally {
      faults.onExport = null;
    }
  });

  it("R-EX-2 R-EX-3 end to end: three failing exports, the hold, the retry resumes and verifies the same sandbox, the same run commits its exact files; no new run or wake; the reusable sandbox is stopped and retained again", async () => {
    const { task, runId, lease, action, input } = await exhaustedRun("reuse_by_environment");
    const sandboxFiles = path.join(sandboxRoot(lease.providerLeaseId!), "workspace");
    expect(await readFile(path.join(sandboxFiles, "a.txt"), "utf8")).toBe("agent edit\n");
    // Nothing reached the host yet.
    expect(await readFile(path.join(task.hostPath, "a.txt"), "utf8")).toBe("host a\n");
    const oldReceipt = readStopReceipt(lease.metadata);

    const result = await retryWorkspaceExport(deps(), input);
    expect(result).toMatchObject({ actionId: action.id, runId, leaseId: lease.id, status: "readmitted", finalization: { outcome: "committed", lease: "stopped_and_retained" } });

    const after = await world.state(runId);
    expect(after.run.status).toBe("succeeded");
    expect(after.coordinator).toMatchObject({ phase: "committed" });
    expect(after.issue.status).toBe("done");
    expect(await import("../dispatch/dispatch-fixture").then((m) => m.readTree(task.hostPath))).toEqual(HOST_AFTER);
    // The hold resolved with the commit; the retry and its note are on it.
    const resolved = await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } });
    expect(resolved).toMatchObject({ status: "resolved", outcome: "export_retry_committed", resolvedByType: "system" });
    expect(readExportRetry(resolved.evidence)).toMatchObject({ state: "readmitted", repairNote: input.repairNote, actor: { type: "user" } });
    // No new provider turn: one run of the task, one agent start, no queued wake.
    expect(await world.db.heartbeatRun.count({ where: { nativeIssueId: task.issueId } })).toBe(1);
    expect(after.codes.filter((c) => c === "agent.started")).toHaveLength(1);
    expect(after.codes).toEqual(expect.arrayContaining(["workspace.export_retry_requested", "workspace.export_retry_readmitted", "run.committed"]));
    // The same lease, stopped and retained again with a NEW receipt; the sandbox is stopped and its files are kept.
    const relet = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(relet.status).toBe("released");
    const receipt = readStopReceipt(relet.metadata);
    expect(receipt.kind).toBe("present");
    expect(receipt.kind === "present" && oldReceipt.kind === "present" && receipt.value.requestId !== oldReceipt.value.requestId).toBe(true);
    expect((await world.registry.get(FAULTY)!.inspect!({ leaseId: lease.id, pluginId: FAULTY, providerLeaseId: lease.providerLeaseId! })).state).toBe("stopped");
    expect(await readFile(path.join(sandboxFiles, "a.txt"), "utf8")).toBe("agent edit\n");

    // R-EX-3 a duplicate request after the commit: the hold is resolved, nothing is written.
    const before = await written(runId, lease.id, action.id);
    await expect(retryWorkspaceExport(deps(), input)).rejects.toMatchObject({ code: "action_not_open" });
    expect(await written(runId, lease.id, action.id)).toBe(before);
  });

  it("R-EX-2 R-DT-2 an ephemeral sandbox carries its sentinel beside the workspace, is verified, and is destroyed only after the exact result committed", async () => {
    const { task, runId, lease, input } = await exhaustedRun("ephemeral");
    const root = sandboxRoot(lease.providerLeaseId!);
    const sentinel = JSON.parse(await readFile(path.join(root, "sentinel.json"), "utf8"));
    expect(sentinel).toEqual((lease.metadata as Record<string, unknown>).workspaceSentinel);
    expect(sentinel).toMatchObject({ runId, leaseId: lease.id, providerLeaseId: lease.providerLeaseId });
    // The exhausted hold kept the ephemeral sandbox (R-EX-4): stopped, not destroyed.
    expect(await exists(root)).toBe(true);

    const result = await retryWorkspaceExport(deps(), input);
    expect(result).toMatchObject({ status: "readmitted", finalization: { outcome: "committed", lease: "destroyed" } });
    expect(await import("../dispatch/dispatch-fixture").then((m) => m.readTree(task.hostPath))).toEqual(HOST_AFTER);
    expect(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: "destroyed" });
    expect(await exists(root)).toBe(false);
    const barrier = await world.db.workspaceOperation.count({ where: { runId, phase: "workspace_finalize", status: "succeeded" } });
    expect(barrier).toBe(1);
  });

  it("R-DT-2 a legacy ephemeral allocation without the sentinel stays blocked: 409 sentinel_missing, nothing written, no sentinel created", async () => {
    const { runId, lease, action, input } = await exhaustedRun("ephemeral");
    await world.db.$executeRaw`UPDATE environment_leases SET metadata = metadata - 'workspaceSentinel' WHERE id = ${lease.id}::uuid`;
    const before = await written(runId, lease.id, action.id);
    const resumesBefore = faults.resumes;
    await expect(retryWorkspaceExport(deps(), input)).rejects.toMatchObject({ kind: "conflict", code: "sentinel_missing" });
    expect(await written(runId, lease.id, action.id)).toBe(before);
    expect(faults.resumes).toBe(resumesBefore);
    expect((await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).metadata).not.toHaveProperty("workspaceSentinel");
  });

  it("R-DT-2 a sandbox whose in-sandbox sentinel differs is not the original: stopped and retained again, nothing re-admitted", async () => {
    const { runId, lease, action, input } = await exhaustedRun("ephemeral");
    const file = path.join(sandboxRoot(lease.providerLeaseId!), "sentinel.json");
    const forged = JSON.parse(await readFile(file, "utf8"));
    await import("node:fs/promises").then((fs) => fs.writeFile(file, JSON.stringify({ ...forged, nonce: "0".repeat(64) })));
    await expect(retryWorkspaceExport(deps(), input)).rejects.toMatchObject({ code: "export_retry_sentinel_mismatch" });
    expect(await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } })).toMatchObject({ phase: "terminal_failure" });
    const relet = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(relet.status).toBe("released");
    expect(readStopReceipt(relet.metadata).kind).toBe("present");
    expect(readExportRetry((await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } })).evidence)).toMatchObject({ state: "failed", failureCode: "export_retry_sentinel_mismatch" });
  });

  it("R-EX-3 each admission refusal answers 409 (or 422) with a stable code and writes nothing", async () => {
    const { task, runId, lease, action, input } = await exhaustedRun("reuse_by_environment");
    const db = world.db;
    const refuses = async (change: () => Promise<unknown>, undo: () => Promise<unknown>, code: string, request: RetryWorkspaceExportInput = input) => {
      await change();
      const before = await written(runId, lease.id, action.id);
      const resumes = faults.resumes;
      await expect(retryWorkspaceExport(deps(), request), code).rejects.toMatchObject({ code });
      expect(await written(runId, lease.id, action.id), code).toBe(before);
      expect(faults.resumes, code).toBe(resumes);
      await undo();
    };
    const nothing = async () => undefined;

    await refuses(nothing, nothing, "run_mismatch", { ...input, runId: "00000000-0000-4000-8000-000000000000" });
    await expect(retryWorkspaceExport(deps(), { ...input, repairNote: "  " })).rejects.toMatchObject({ kind: "invalid", code: "invalid_request" });
    await expect(retryWorkspaceExport(deps(), { ...input, actionId: "00000000-0000-4000-8000-000000000000" })).rejects.toMatchObject({ kind: "not_found" });

    // Shares finalization ownership: a copyback holding the run's advisory lock refuses.
    const lock = await openDedicatedConnection(database.url(), { applicationName: "test-lock" });
    await refuses(
      async () => {
        await lock.query("BEGIN");
        await lock.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [finalizationLockKey(task.companyId, runId)]);
      },
      async () => {
        await lock.query("ROLLBACK");
        await lock.end();
      },
      "copyback_lock_active",
    );

    const otherAgent = await db.agent.create({ data: { companyId: task.companyId, name: "other", command: ["/bin/true"], environmentId: task.environmentId } });
    await refuses(
      () => db.issue.update({ where: { id: task.issueId }, data: { assigneeAgentId: otherAgent.id } }),
      () => db.issue.update({ where: { id: task.issueId }, data: { assigneeAgentId: task.agentId } }),
      "task_reassigned",
    );
    await refuses(
      () => db.issue.update({ where: { id: task.issueId }, data: { status: "done" } }),
      () => db.issue.update({ where: { id: task.issueId }, data: { status: "blocked" } }),
      "task_closed",
    );
    let newer = "";
    await refuses(
      async () => {
        newer = (await db.heartbeatRun.create({ data: { companyId: task.companyId, agentId: task.agentId, nativeIssueId: task.issueId, status: "queued" } })).id;
      },
      () => db.heartbeatRun.delete({ where: { id: newer } }),
      "newer_run",
    );
    await refuses(
      async () => {
        newer = (await db.heartbeatRun.create({ data: { companyId: task.companyId, agentId: task.agentId, nativeIssueId: task.issueId, status: "cancelled" } })).id;
      },
      () => db.heartbeatRun.delete({ where: { id: newer } }),
      "newer_execution_exists",
    );
    const metadata = lease.metadata as Record<string, unknown>;
    await refuses(
      () => db.environmentLease.update({ where: { id: lease.id }, data: { metadata: { ...metadata, sandboxStopAndRetainReceipt: null } } }),
      () => db.environmentLease.update({ where: { id: lease.id }, data: { metadata: metadata as object } }),
      "stop_unconfirmed",
    );
    await refuses(
      () => db.environmentLease.update({ where: { id: lease.id }, data: { providerLeaseId: "local-replacement" } }),
      () => db.environmentLease.update({ where: { id: lease.id }, data: { providerLeaseId: lease.providerLeaseId } }),
      "lease_changed",
    );
    // An unavailable sandbox (moved away): 409, nothing reopened.
    const root = sandboxRoot(lease.providerLeaseId!);
    await refuses(() => rename(root, `${root}.away`), () => rename(`${root}.away`, root), "sandbox_unavailable");
    await refuses(
      () => db.issueRecoveryAction.update({ where: { id: action.id }, data: { status: "resolved" } }),
      () => db.issueRecoveryAction.update({ where: { id: action.id }, data: { status: "active" } }),
      "action_not_open",
    );

    // After all that, the untouched hold still admits.
    await expect(retryWorkspaceExport(deps(), input)).resolves.toMatchObject({ status: "readmitted", finalization: { outcome: "committed" } });
  });

  it("R-EX-3 a duplicate request is idempotent: the same answer, no second resume", async () => {
    const { runId, lease, action, input } = await exhaustedRun("reuse_by_environment");
    const first = await retryWorkspaceExport(deps(false), input);
    expect(first).toMatchObject({ status: "readmitted", finalization: null });
    expect(await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } })).toMatchObject({ phase: "result_accepted", attempt: 0 });
    const resumes = faults.resumes;
    const before = await written(runId, lease.id, action.id);
    const second = await retryWorkspaceExport(deps(false), input);
    expect(second).toMatchObject({ status: "already_requested", retryState: "readmitted", requestId: first.requestId });
    expect(faults.resumes).toBe(resumes);
    expect(await written(runId, lease.id, action.id)).toBe(before);
    // The ordinary finalization then commits the same run; the hold resolves.
    const outcome = await finalizeRun(world.deps(), { runId });
    expect(outcome.kind).toBe("committed");
    expect(await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } })).toMatchObject({ status: "resolved" });
    expect(await releaseLeaseByPolicy(world.db, world.registry, { leaseId: lease.id, runId, outcome: "committed" })).toMatchObject({ kind: "stopped_and_retained" });
  });

  it("R-EX-5 a lost resume reply stops and retains the sandbox again and re-admits nothing; a later retry succeeds", async () => {
    const { runId, lease, action, input } = await exhaustedRun("reuse_by_environment");
    faults.resumeLostReplies = 1;
    await expect(retryWorkspaceExport(deps(), input)).rejects.toMatchObject({ kind: "unavailable", code: "export_retry_resume_failed" });
    const relet = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(relet).toMatchObject({ status: "released", cleanupClaimedBy: null });
    expect(readStopReceipt(relet.metadata).kind).toBe("present");
    expect((await world.registry.get(FAULTY)!.inspect!({ leaseId: lease.id, pluginId: FAULTY, providerLeaseId: lease.providerLeaseId! })).state).toBe("stopped");
    expect(await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } })).toMatchObject({ phase: "terminal_failure" });
    expect((await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("failed");
    expect(readExportRetry((await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } })).evidence)).toMatchObject({ state: "failed", failureCode: "export_retry_resume_failed" });
    // Retry export after the lease has a new confirmed stopped receipt.
    await expect(retryWorkspaceExport(deps(), input)).resolves.toMatchObject({ status: "readmitted", finalization: { outcome: "committed" } });
  });

  it("R-EX-5 a failed probe after the resume stops and retains the sandbox again and re-admits nothing", async () => {
    const { runId, lease, action, input } = await exhaustedRun("reuse_by_environment");
    faults.inspectFailuresAfterResume = 1;
    faults.armedAtResume = faults.resumes;
    await expect(retryWorkspaceExport(deps(), input)).rejects.toMatchObject({ code: "export_retry_probe_failed" });
    const relet = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(relet.status).toBe("released");
    expect(readStopReceipt(relet.metadata).kind).toBe("present");
    expect(await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } })).toMatchObject({ phase: "terminal_failure" });
    expect((await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } })).status).toBe("active");
  });

  it("R-EX-3 a re-admitted run whose exports fail three times again is held again by the same action; a new retry then commits it", async () => {
    const { runId, lease, action, input } = await exhaustedRun("reuse_by_environment");
    const first = await retryWorkspaceExport(deps(false), input);
    faults.exportFailures = 1_000;
    for (let i = 0; i < 4; i += 1) {
      const coordinator = await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } });
      if (coordinator.phase === "terminal_failure") break;
      const at = new Date((coordinator.nextAttemptAt ?? new Date()).getTime() + 1);
      const outcome = await finalizeRun({ ...world.deps(), now: () => at }, { runId });
      const release = leaseOutcomeAfterFinalize(outcome);
      if (release) await releaseLeaseByPolicy(world.db, world.registry, { leaseId: lease.id, runId, outcome: release });
    }
    faults.exportFailures = 0;
    expect(await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } })).toMatchObject({ phase: "terminal_failure", failureCode: "native_workspace_sync_out_retry_exhausted", attempt: 3 });
    expect(await world.db.issueRecoveryAction.count({ where: { runId, status: "active" } })).toBe(1);
    const relet = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(relet.status).toBe("released");
    expect(readStopReceipt(relet.metadata).kind).toBe("present");
    const second = await retryWorkspaceExport(deps(), input);
    expect(second).toMatchObject({ status: "readmitted", finalization: { outcome: "committed" } });
    expect(second.requestId).not.toBe(first.requestId);
    const resolved = await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } });
    expect(resolved.status).toBe("resolved");
    expect((resolved.evidence as { exportRetryHistory: { requestId: string }[] }).exportRetryHistory.map((r) => r.requestId)).toEqual([first.requestId]);
  });

  it("R-EX-5 an admission that changed while the sandbox was resumed (a newer run queued) stops and retains it again and re-admits nothing", async () => {
    const { task, runId, lease, action, input } = await exhaustedRun("reuse_by_environment");
    let newer = "";
    faults.duringResume = async () => {
      newer = (await world.db.heartbeatRun.create({ data: { companyId: task.companyId, agentId: task.agentId, nativeIssueId: task.issueId, status: "queued" } })).id;
    };
    await expect(retryWorkspaceExport(deps(), input)).rejects.toMatchObject({ kind: "conflict", code: "newer_run" });
    expect(await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } })).toMatchObject({ phase: "terminal_failure" });
    expect((await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("failed");
    const relet = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(relet.status).toBe("released");
    expect(readStopReceipt(relet.metadata).kind).toBe("present");
    expect((await world.registry.get(FAULTY)!.inspect!({ leaseId: lease.id, pluginId: FAULTY, providerLeaseId: lease.providerLeaseId! })).state).toBe("stopped");
    expect(readExportRetry((await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } })).evidence)).toMatchObject({ state: "failed", failureCode: "newer_run" });
    await world.db.heartbeatRun.delete({ where: { id: newer } });
  });
});
