// The export retry family on Daytona (the real plugin, the emulator as its endpoint, real
// PostgreSQL, executeRun and finalizeRun as the worker drives them): every download of the delta
// export is truncated by the emulator, three coordinator attempts fail as transport failures, the
// run is held with the exact sandbox stopped (auto-delete disabled and read back) and its files
// kept; the operator's Retry export resumes that sandbox, verifies its sentinel and the same run
// commits the sandbox's exact bytes.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { leaseOutcomeAfterFinalize } from "../../src/finalization/finalize-outcome-policy";
import { readStopReceipt } from "../../src/leases/lease-metadata";
import { releaseLeaseByPolicy } from "../../src/leases/release-lease";
import { readExportRetry } from "../../src/records/actions-export-retry";
import { EXPORT_RETRY_EXHAUSTED_CAUSE } from "../../src/records/causes";
import { retryWorkspaceExport, type RetryWorkspaceExportInput } from "../../src/recovery/operator/retry-workspace-export";
import { RESULT_DONE, readTree, submitResult } from "../dispatch/dispatch-fixture";
import { useDaytonaDispatch } from "../dispatch/daytona-dispatch-fixture";

const world = useDaytonaDispatch();

type Breakage = "truncated_downloads" | "uploads_503";

/**
 * From the first export on, until the test clears the faults: every transfer out of the sandbox
 * breaks after a few bytes, or every upload into it (the export's path lists) answers 503.
 */
function breakExports(breakage: Breakage): void {
  world.beforeExport = () => {
    world.emulator.faults.clear();
    for (let i = 0; i < 50; i += 1) {
      world.emulator.faults.once(breakage === "truncated_downloads" ? { op: "download", kind: "truncate", afterBytes: 3 } : { op: "upload", kind: "status", status: 503 });
    }
  };
}

async function exhaustedRun(policy: "reuse_by_environment" | "ephemeral", breakage: Breakage = "truncated_downloads") {
  const task = await world.daytonaTask({
    policy,
    files: { "a.txt": "host a\n", "old.txt": "old\n" },
    script: `printf 'agent edit\\n' > a.txt && mkdir -p src && printf 'new file\\n' > src/new.txt && rm old.txt && ${submitResult(RESULT_DONE)}`,
  });
  breakExports(breakage);
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
  world.beforeExport = null;
  world.emulator.faults.clear();
  const state = await world.state(runId);
  const lease = state.leases[0]!;
  const action = await world.db.issueRecoveryAction.findFirst({ where: { runId, cause: EXPORT_RETRY_EXHAUSTED_CAUSE, status: "active" } });
  const input: RetryWorkspaceExportInput = {
    companyId: task.companyId,
    issueId: task.issueId,
    actionId: action?.id ?? "",
    runId,
    repairNote: "The emulator's transfers are whole again; the sandbox was left as it is.",
    actor: { type: "user", id: null },
  };
  return { task, runId, state, lease, action, input };
}

const HOST_AFTER = { "a.txt": { type: "file", content: "agent edit\n" }, src: { type: "dir" }, "src/new.txt": { type: "file", content: "new file\n" } };
const HOST_BEFORE = { "a.txt": { type: "file", content: "host a\n" }, "old.txt": { type: "file", content: "old\n" } };
const deps = () => ({ db: world.db, registry: world.registry, finalize: world.deps() });

describe("export retry on Daytona (emulator)", { timeout: 120_000 }, () => {
  it("R-EX-1 R-DT-1 R-EX-2 R-EX-3 truncated downloads exhaust three attempts; the hold keeps the stopped sandbox (auto-delete disabled); Retry export resumes it and the same run commits its exact files", async () => {
    const { task, runId, state, lease, action, input } = await exhaustedRun("reuse_by_environment");
    // R-EX-1: exhausted after three attempts, a transport cause, never a disk-space guess.
    expect(state.coordinator).toMatchObject({ phase: "terminal_failure", failureCode: "native_workspace_sync_out_retry_exhausted" });
    expect(state.run.status).toBe("failed");
    expect(JSON.stringify(state.coordinator?.failureDetail ?? {})).not.toMatch(/disk|space|ENOSPC/i);
    // Each failed try is a provider/transport failure of the plugin (R-RR-1: retryable before any host write).
    const failed = state.events.filter((e) => e.code === "workspace.copyback_failed").map((e) => String((e.payload as { errorCode?: string }).errorCode));
    expect(failed).toHaveLength(2);
    // A truncated download is a dropped transfer (R-RR-1), never "Daytona unreachable"; and attempt 2
    // reached the sandbox (resumed, R-EX-1), not Daytona refusing a command in a stopped one.
    expect(failed).toEqual(["transfer_dropped", "transfer_dropped"]);
    expect(action).not.toBeNull();
    // The host is untouched; the sandbox is stopped with auto-delete disabled and the agent's bytes kept.
    expect(await readTree(task.hostPath)).toEqual(HOST_BEFORE);
    expect(lease.status).toBe("released");
    const oldReceipt = readStopReceipt(lease.metadata);
    expect(oldReceipt).toMatchObject({ kind: "present", value: { method: "environmentStopLease", pluginId: "builtin.daytona" } });
    const record = world.emulator.sandbox(world.sandboxIdOf(lease.providerLeaseId));
    expect(record.state).toBe("stopped");
    expect(record.autoDeleteInterval).toBe(-1);
    const files = world.sandboxWorkspace(lease.providerLeaseId);
    expect(await readFile(path.join(files, "a.txt"), "utf8")).toBe("agent edit\n");

    const result = await retryWorkspaceExport(deps(), input);
    expect(result).toMatchObject({ actionId: action!.id, runId, leaseId: lease.id, status: "readmitted", finalization: { outcome: "committed", lease: "stopped_and_retained" } });
    const after = await world.state(runId);
    expect(after.run.status).toBe("succeeded");
    expect(after.coordinator).toMatchObject({ phase: "committed" });
    expect(after.issue.status).toBe("done");
    expect(await readTree(task.hostPath)).toEqual(HOST_AFTER);
    const resolved = await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: action!.id } });
    expect(resolved).toMatchObject({ status: "resolved", outcome: "export_retry_committed" });
    expect(readExportRetry(resolved.evidence)).toMatchObject({ state: "readmitted", repairNote: input.repairNote });
    // No new turn; the same sandbox stopped again with a new receipt, still without auto-delete.
    expect(await world.db.heartbeatRun.count({ where: { nativeIssueId: task.issueId } })).toBe(1);
    expect(after.codes.filter((c) => c === "agent.started")).toHaveLength(1);
    const relet = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    const receipt = readStopReceipt(relet.metadata);
    expect(receipt.kind === "present" && oldReceipt.kind === "present" && receipt.value.requestId !== oldReceipt.value.requestId).toBe(true);
    expect(record.state).toBe("stopped");
    expect(record.autoDeleteInterval).toBe(-1);
  });

  it("R-EX-4 R-DT-2 an ephemeral sandbox is kept stopped by the hold, verified by its sentinel at the retry, and destroyed only after the exact result committed", async () => {
    const { task, lease, action, input } = await exhaustedRun("ephemeral");
    expect(action).not.toBeNull();
    const sandboxId = world.sandboxIdOf(lease.providerLeaseId);
    expect(world.emulator.sandbox(sandboxId).state).toBe("stopped");
    expect((lease.metadata as Record<string, unknown>).workspaceSentinel).toMatchObject({ leaseId: lease.id, providerLeaseId: lease.providerLeaseId });

    const result = await retryWorkspaceExport(deps(), input);
    expect(result).toMatchObject({ status: "readmitted", finalization: { outcome: "committed", lease: "destroyed" } });
    expect(await readTree(task.hostPath)).toEqual(HOST_AFTER);
    expect(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: "destroyed" });
    expect(() => world.emulator.sandbox(sandboxId)).toThrow();
  });

  it("R-DT-2 a Daytona sandbox whose sentinel differs is refused after the resume (a stopped sandbox cannot be read before it): stopped and retained again, nothing exported or committed", async () => {
    const { task, runId, lease, action, input } = await exhaustedRun("ephemeral");
    const file = path.join(path.dirname(world.sandboxWorkspace(lease.providerLeaseId)), "sentinel.json");
    const forged = JSON.parse(await readFile(file, "utf8"));
    await writeFile(file, JSON.stringify({ ...forged, nonce: "0".repeat(64) }));
    let exports = 0;
    world.beforeExport = () => void (exports += 1);
    await expect(retryWorkspaceExport(deps(), input)).rejects.toMatchObject({ code: "export_retry_sentinel_mismatch" });
    expect(exports).toBe(0);
    expect(await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } })).toMatchObject({ phase: "terminal_failure" });
    expect(await readTree(task.hostPath)).toEqual(HOST_BEFORE);
    const relet = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(relet.status).toBe("released");
    expect(readStopReceipt(relet.metadata).kind).toBe("present");
    const record = world.emulator.sandbox(world.sandboxIdOf(lease.providerLeaseId));
    expect(record.state).toBe("stopped");
    expect(record.autoDeleteInterval).toBe(-1);
    expect(readExportRetry((await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: action!.id } })).evidence)).toMatchObject({ state: "failed", failureCode: "export_retry_sentinel_mismatch" });
  });

  it("R-EX-1 R-EX-2 Daytona answering 503 to every upload of the export (as the browser journey stages it): three provider failures, the hold, and Retry export commits", async () => {
    const { task, state, lease, input } = await exhaustedRun("reuse_by_environment", "uploads_503");
    expect(state.coordinator).toMatchObject({ phase: "terminal_failure", failureCode: "native_workspace_sync_out_retry_exhausted" });
    const failed = state.events.filter((e) => e.code === "workspace.copyback_failed").map((e) => String((e.payload as { errorCode?: string }).errorCode));
    // Every attempt's three tries met the 503s: the second attempt resumed the sandbox the first
    // one's release had stopped (before defect B was fixed it met it stopped: provider_daytona_refused).
    expect(failed).toEqual(["provider_daytona_unavailable", "provider_daytona_unavailable"]);
    expect(readStopReceipt(lease.metadata).kind).toBe("present");
    expect(await readTree(task.hostPath)).toEqual(HOST_BEFORE);
    expect(await retryWorkspaceExport(deps(), input)).toMatchObject({ status: "readmitted", finalization: { outcome: "committed" } });
    expect(await readTree(task.hostPath)).toEqual(HOST_AFTER);
  });

  // Issue 21 defect B (was it.fails): after a retryable copyback failure the lease is released as
  // "failed" (finalize-outcome-policy.ts: stop and retain), and the next coordinator attempt used
  // to export from the STOPPED sandbox. The local and fake providers read a stopped sandbox's
  // files; Daytona runs no command there (HTTP 400, provider_daytona_refused), so attempts 2 and 3
  // could never succeed. Now the attempt resumes it first (finalization/resume-for-export.ts).
  it("R-EX-1 R-EX-5 a transient fault of the first coordinator attempt only: the second attempt resumes the stopped Daytona sandbox under a stop-only intent, commits its exact files and stops it again", async () => {
    const task = await world.daytonaTask({
      policy: "reuse_by_environment",
      files: { "a.txt": "host a\n", "old.txt": "old\n" },
      script: `printf 'agent edit\\n' > a.txt && mkdir -p src && printf 'new file\\n' > src/new.txt && rm old.txt && ${submitResult(RESULT_DONE)}`,
    });
    let armed = false;
    world.beforeExport = () => {
      if (armed) return;
      armed = true;
      // Three tries of the attempt, each spending the plugin's three calls: nine 503s fail attempt 1 exactly.
      for (let i = 0; i < 9; i += 1) world.emulator.faults.once({ op: "upload", kind: "status", status: 503 });
    };
    const runId = await world.runOnce(task);
    const coordinator = await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } });
    expect(coordinator.phase).toBe("retryable_failure");
    // The live path released the lease after the retryable failure: the Daytona sandbox is stopped.
    const [lease] = await world.db.environmentLease.findMany({ where: { runId } });
    expect(world.emulator.sandbox(world.sandboxIdOf(lease!.providerLeaseId)).state).toBe("stopped");
    const outcome = await finalizeRun({ ...world.deps(), now: () => new Date((coordinator.nextAttemptAt ?? new Date()).getTime() + 1) }, { runId });
    expect(outcome).toMatchObject({ kind: "committed" });
    expect(await readTree(task.hostPath)).toEqual(HOST_AFTER);
    // R-EX-5: the resume ran under a stop-only intent that replaced the old receipt; the attempt gave
    // its claim back, so the run's release stops the sandbox again by that intent (a new receipt).
    const during = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease!.id } });
    expect(during.status).toBe("pending_cleanup");
    expect(during.metadata).toHaveProperty("sandboxStopAndRetain");
    expect(readStopReceipt(during.metadata).kind).not.toBe("present");
    expect(during.cleanupClaimedBy).toBeNull();
    expect(world.emulator.sandbox(world.sandboxIdOf(lease!.providerLeaseId)).state).toBe("started");
    const oldReceipt = readStopReceipt(lease!.metadata);
    expect(await releaseLeaseByPolicy(world.db, world.registry, { leaseId: lease!.id, runId, outcome: "committed" })).toMatchObject({ kind: "stopped_and_retained" });
    const relet = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease!.id } });
    const receipt = readStopReceipt(relet.metadata);
    expect(relet.status).toBe("released");
    expect(receipt.kind === "present" && oldReceipt.kind === "present" && receipt.value.requestId !== oldReceipt.value.requestId).toBe(true);
    expect(world.emulator.sandbox(world.sandboxIdOf(lease!.providerLeaseId)).state).toBe("stopped");
    const s = await world.state(runId);
    expect(s.codes).toContain("workspace.sandbox_resuming");
    expect(s.run.status).toBe("succeeded");
  });
});
