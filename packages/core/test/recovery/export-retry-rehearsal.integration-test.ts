// Rehearsing the export-only retry with the built-in fake provider's environment-config faults,
// as an operator or an E2E suite would on a real install: the environment's
// config makes every export fail (three coordinator attempts), the probe fail once and the resume
// reply get lost once. Each path then behaves as on a real provider: a failed first probe is a
// 409 with nothing written, a failed sentinel read and a lost resume reply stop and retain the
// sandbox again, and the next retry re-admits the run, which the reconciler's finalization sweep
// commits with its exact files; the ephemeral sandbox is destroyed only after that commit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { leaseOutcomeAfterFinalize } from "../../src/finalization/finalize-outcome-policy";
import { readStopReceipt } from "../../src/leases/lease-metadata";
import { releaseLeaseByPolicy } from "../../src/leases/release-lease";
import { readExportRetry } from "../../src/records/actions-export-retry";
import { EXPORT_RETRY_EXHAUSTED_CAUSE } from "../../src/records/causes";
import { retryWorkspaceExport } from "../../src/recovery/operator/retry-workspace-export";
import { finalizationSweep } from "../../src/recovery/sweeps/finalization-sweep";
import { parseJson, runCli } from "../cli/helpers";
import { DispatchWorld, RESULT_DONE, readTree, submitResult } from "../dispatch/dispatch-fixture";

const database = useTestDatabase({ poolSize: 8 });
const world = new DispatchWorld(database);
beforeAll(() => world.setUp());
afterAll(() => world.tearDown());

describe("rehearsing the export-only retry with the fake provider's config faults", () => {
  it("R-EX-5 R-DT-2 exports fail three times, a failed probe refuses, a failed sentinel read and a lost resume reply stop again, then the retry commits the same run", async () => {
    const task = await world.task({ provider: "fake", policy: "ephemeral", files: { "a.txt": "host a\n" } });
    // The rehearsal: faults on the environment's config (validated by zod when a lease is acquired).
    await world.db.environment.update({
      where: { id: task.environmentId },
      data: { config: { faults: { fail: { exportWorkspace: 9 }, probeFailure: 1, resumeReplyLost: 1 } } },
    });
    world.scriptFake(() => ({ exitCode: 0, resultFile: RESULT_DONE, files: { "a.txt": "agent edit\n", "b.txt": "new\n" } }));
    const runId = await world.runOnce(task);
    for (let i = 0; i < 3; i += 1) {
      const coordinator = await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } });
      if (coordinator.phase !== "retryable_failure") break;
      const at = new Date((coordinator.nextAttemptAt ?? new Date()).getTime() + 1);
      const outcome = await finalizeRun({ ...world.deps(), now: () => at }, { runId });
      const [lease] = await world.db.environmentLease.findMany({ where: { runId } });
      const release = leaseOutcomeAfterFinalize(outcome);
      if (release && lease) await releaseLeaseByPolicy(world.db, world.registry, { leaseId: lease.id, runId, outcome: release });
    }
    const held = await world.state(runId);
    expect(held.coordinator).toMatchObject({ phase: "terminal_failure", failureCode: "native_workspace_sync_out_retry_exhausted" });
    const lease = held.leases[0]!;
    expect(lease).toMatchObject({ status: "released", metadata: { sandboxStopAndRetainReceipt: { method: "builtin.stopLease" } } });
    // R-DT-2: the fake's new ephemeral sandbox holds the same sentinel the lease records.
    const sandbox = world.fake.store.get(lease.providerLeaseId!)!;
    expect(sandbox.sentinel).toEqual((lease.metadata as Record<string, unknown>).workspaceSentinel);
    expect(sandbox.state).toBe("stopped");
    const action = await world.db.issueRecoveryAction.findFirstOrThrow({ where: { runId, cause: EXPORT_RETRY_EXHAUSTED_CAUSE, status: "active" } });
    const input = { companyId: task.companyId, issueId: task.issueId, actionId: action.id, runId, repairNote: "Rehearsal.", actor: { type: "user" as const, id: null } };
    const deps = { db: world.db, registry: world.registry };

    // 1. The first probe (inspect) fails: the sandbox is not shown available, 409, nothing written.
    const untouched = JSON.stringify(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } }));
    await expect(retryWorkspaceExport(deps, input)).rejects.toMatchObject({ kind: "conflict", code: "sandbox_unavailable" });
    expect(JSON.stringify(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } }))).toBe(untouched);

    // 2. The sentinel read fails: stopped and retained again (a new receipt), nothing re-admitted.
    await expect(retryWorkspaceExport(deps, input)).rejects.toMatchObject({ kind: "unavailable", code: "export_retry_probe_failed" });
    const afterProbe = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(afterProbe.status).toBe("released");
    expect(readStopReceipt(afterProbe.metadata).kind).toBe("present");
    expect(sandbox.state).toBe("stopped");

    // 3. The resume happens but its reply is lost: stopped and retained again.
    await expect(retryWorkspaceExport(deps, input)).rejects.toMatchObject({ code: "export_retry_resume_failed" });
    expect(sandbox.state).toBe("stopped");
    expect((await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } })).phase).toBe("terminal_failure");

    // 4. Repaired: re-admitted; the reconciler's finalization sweep commits the same run.
    await expect(retryWorkspaceExport(deps, input)).resolves.toMatchObject({ status: "readmitted" });
    const sweep = finalizationSweep({ ...world.deps(), executesHere: () => false });
    expect(await sweep.handle({ runId, companyId: task.companyId })).toBe("committed");
    const done = await world.state(runId);
    expect(done.run.status).toBe("succeeded");
    expect(done.issue.status).toBe("done");
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "agent edit\n" }, "b.txt": { type: "file", content: "new\n" } });
    const resolved = await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } });
    expect(resolved.status).toBe("resolved");
    expect(readExportRetry(resolved.evidence)).toMatchObject({ state: "readmitted" });
    expect((resolved.evidence as { exportRetryHistory: unknown[] }).exportRetryHistory).toHaveLength(2);
    // The ephemeral sandbox followed its destroy-after-turn policy only after the commit.
    expect(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: "destroyed" });
    expect(world.fake.store.has(lease.providerLeaseId!)).toBe(false);
    expect(await world.db.heartbeatRun.count({ where: { nativeIssueId: task.issueId } })).toBe(1);
    expect(done.codes.filter((c) => c === "agent.started")).toHaveLength(1);
  });

  it("R-EX-5 a retry interrupted mid-resume leaves the stop-only intent and its 15-minute claim: the cleanup sweep stops the sandbox only after the claim expires, then a new retry commits", async () => {
    const { leaseCleanupSweep } = await import("../../src/recovery/sweeps/lease-cleanup-sweep");
    const task = await world.task({ provider: "fake", policy: "ephemeral" });
    await world.db.environment.update({ where: { id: task.environmentId }, data: { config: { faults: { fail: { exportWorkspace: 9 }, hang: { resume: 1 } } } } });
    world.scriptFake(() => ({ exitCode: 0, resultFile: RESULT_DONE, files: { "x.txt": "x\n" } }));
    const runId = await world.runOnce(task);
    for (let i = 0; i < 3; i += 1) {
      const coordinator = await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } });
      if (coordinator.phase !== "retryable_failure") break;
      const at = new Date((coordinator.nextAttemptAt ?? new Date()).getTime() + 1);
      const outcome = await finalizeRun({ ...world.deps(), now: () => at }, { runId });
      const [lease] = await world.db.environmentLease.findMany({ where: { runId } });
      const release = leaseOutcomeAfterFinalize(outcome);
      if (release && lease) await releaseLeaseByPolicy(world.db, world.registry, { leaseId: lease.id, runId, outcome: release });
    }
    const action = await world.db.issueRecoveryAction.findFirstOrThrow({ where: { runId, cause: EXPORT_RETRY_EXHAUSTED_CAUSE } });
    const [lease] = await world.db.environmentLease.findMany({ where: { runId } });
    // The controller "crashes" with its resume in flight (it never settles).
    void retryWorkspaceExport({ db: world.db, registry: world.registry }, { companyId: task.companyId, issueId: task.issueId, actionId: action.id, runId, repairNote: "r", actor: { type: "user", id: null } }).catch(() => undefined);
    for (let i = 0; i < 200 && !world.fake.calls.some((c) => c.op === "resume" && c.leaseId === lease!.id); i += 1) await new Promise((r) => setTimeout(r, 25));
    const pending = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease!.id } });
    expect(pending).toMatchObject({ status: "pending_cleanup", cleanupClaimedBy: `export-retry:${action.id}`, metadata: { sandboxStopAndRetain: { leaseId: lease!.id } } });
    expect(pending.metadata).not.toHaveProperty("sandboxStopAndRetainReceipt");
    const sweep = leaseCleanupSweep({ db: world.db, registry: world.registry });
    expect((await sweep.due(50)).map((u) => u.leaseId)).not.toContain(lease!.id);
    await world.db.$executeRaw`UPDATE environment_leases SET cleanup_claimed_until = now() - interval '1 second' WHERE id = ${lease!.id}::uuid`;
    expect(await sweep.handle({ leaseId: lease!.id, companyId: task.companyId })).toBe("stopped_and_retained");
    // Stopped with its files, never destroyed: the run did not commit.
    expect(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease!.id } })).toMatchObject({ status: "released" });
    expect(world.fake.store.get(lease!.providerLeaseId!)?.workspace.has("x.txt")).toBe(true);
    // The interrupted retry is over: a new request is admitted (not answered as its duplicate) and the same run commits.
    const again = await retryWorkspaceExport(
      { db: world.db, registry: world.registry, finalize: world.deps() },
      { companyId: task.companyId, issueId: task.issueId, actionId: action.id, runId, repairNote: "again", actor: { type: "user" as const, id: null } },
    );
    expect(again).toMatchObject({ status: "readmitted", finalization: { outcome: "committed", lease: "destroyed" } });
    expect(await readTree(task.hostPath)).toEqual({ "x.txt": { type: "file", content: "x\n" } });
  });

  it("R-EX-2 on the default install: a local environment's rehearsal faults fail three export attempts, `copyback recovery retry-export` resumes the sandbox and the reconciler commits the same run", async () => {
    const task = await world.task({
      provider: "local",
      policy: "reuse_by_environment",
      files: { "a.txt": "host a\n" },
      script: `printf 'agent edit\\n' > a.txt && ${submitResult(RESULT_DONE)}`,
    });
    await world.db.environment.update({ where: { id: task.environmentId }, data: { config: { faults: { failExports: 9 } } } });
    const runId = await world.runOnce(task);
    for (let i = 0; i < 3; i += 1) {
      const coordinator = await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } });
      if (coordinator.phase !== "retryable_failure") break;
      const at = new Date((coordinator.nextAttemptAt ?? new Date()).getTime() + 1);
      const outcome = await finalizeRun({ ...world.deps(), now: () => at }, { runId });
      const [lease] = await world.db.environmentLease.findMany({ where: { runId } });
      const release = leaseOutcomeAfterFinalize(outcome);
      if (release && lease) await releaseLeaseByPolicy(world.db, world.registry, { leaseId: lease.id, runId, outcome: release });
    }
    expect(await world.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId } })).toMatchObject({ phase: "terminal_failure", failureCode: "native_workspace_sync_out_retry_exhausted" });
    const action = await world.db.issueRecoveryAction.findFirstOrThrow({ where: { runId, cause: EXPORT_RETRY_EXHAUSTED_CAUSE, status: "active" } });

    // The operator's CLI: another process's providers, the same instance root and database.
    const cli = await runCli(["--json", "recovery", "retry-export", "--issue", task.issueId, "--action", action.id, "--run", runId, "--note", "Rehearsal: transport restored."], {
      databaseUrl: database.url(),
      copybackHome: world.instanceRoot,
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(parseJson(cli)).toMatchObject({ status: "readmitted", runId });
    const sweep = finalizationSweep({ ...world.deps(), executesHere: () => false });
    expect(await sweep.handle({ runId, companyId: task.companyId })).toBe("committed");
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "agent edit\n" } });
    expect(await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } })).toMatchObject({ status: "resolved", outcome: "export_retry_committed" });
    const [lease] = await world.db.environmentLease.findMany({ where: { runId } });
    expect(lease).toMatchObject({ status: "released", metadata: { sandboxStopAndRetainReceipt: { method: "environmentStopLease" } } });
    expect(await world.db.heartbeatRun.count({ where: { nativeIssueId: task.issueId } })).toBe(1);
  });
});
