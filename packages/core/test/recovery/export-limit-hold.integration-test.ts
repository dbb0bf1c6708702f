// Limits held, not omitted (R-UA-3, R-UA-4) on a real PostgreSQL, real files and real tar streams:
// an archive over an entry or size limit, or with colliding paths, fails the run terminally with
// the limit's code AND, in that same transaction, pins the exact sandbox with a stop-only intent
// and opens one board action naming the limit; the sandbox's files are kept, the host untouched,
// nothing is omitted. An unsafe link, by contrast, never fails a completed task or asks for repair.
import { open, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { DEFAULT_ARCHIVE_LIMITS } from "../../src/copyback/archive/limits";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { readStopIntent } from "../../src/leases/lease-metadata";
import { releaseLeaseByPolicy } from "../../src/leases/release-lease";
import { readExportLimitEvidence } from "../../src/records/actions";
import { EXPORT_LIMIT_CAUSE } from "../../src/records/causes";
import { LEASE_METADATA_KEYS, STOP_RECEIPT_SCHEMA } from "../../src/leases/lease-metadata";
import { resolveRecoveryAction } from "../../src/recovery/operator/resolve-recovery-action";
import { wakeAgent } from "../../src/runs/wake-agent";
import { preparedRun, readTree, writeTree, type World, useWorld } from "../finalization/finalization-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

async function oversizedFile(path: string): Promise<void> {
  const handle = await open(path, "w");
  try {
    await handle.truncate(DEFAULT_ARCHIVE_LIMITS.maxEntryBytes + 1);
  } finally {
    await handle.close();
  }
}

async function held(runId: string) {
  const prisma = db.prisma();
  return {
    run: await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } }),
    coordinator: await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId } }),
    actions: await prisma.issueRecoveryAction.findMany({ where: { runId } }),
    events: await prisma.runEvent.findMany({ where: { runId }, orderBy: { createdAt: "asc" } }),
  };
}

describe("limits held, not omitted", () => {
  it("R-UA-3 an archive over the per-file limit fails the run AND, in that transaction, pins the sandbox and opens one board action naming the limit; the sandbox's files are kept, the host untouched, nothing omitted", async () => {
    const prisma = db.prisma();
    await writeTree(world.hostPath, { "host.txt": "host" });
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "work.txt": "would be lost if omitted" });
    await oversizedFile(join(run.sandbox, "huge.bin"));
    const hostBefore = await readTree(world.hostPath);

    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "terminal_failure", code: "native_workspace_sync_out_entry_too_large" });

    // The state right after that transaction, before any release (what a crash here leaves).
    const s = await held(run.runId);
    expect(s.run).toMatchObject({ status: "failed", errorCode: "native_workspace_sync_out_entry_too_large" });
    expect(s.coordinator).toMatchObject({ phase: "terminal_failure", failureCode: "native_workspace_sync_out_entry_too_large", resultId: run.resultId });
    expect(s.actions).toHaveLength(1);
    const action = s.actions[0]!;
    expect(action).toMatchObject({ cause: EXPORT_LIMIT_CAUSE, ownerType: "board", status: "active", leaseId: run.handle.leaseId });
    expect(action.nextAction).toContain(`maxEntryBytes = ${DEFAULT_ARCHIVE_LIMITS.maxEntryBytes}`);
    expect(action.nextAction).toContain(`"huge.bin"`);
    expect(action.nextAction).toMatch(/nothing was left out/i);
    expect(action.nextAction).not.toContain(world.hostPath);
    expect(action.wakePolicy).toEqual({ automaticWake: false });
    expect(readExportLimitEvidence(action.evidence)).toMatchObject({
      runId: run.runId,
      resultId: run.resultId,
      leaseId: run.handle.leaseId,
      providerLeaseId: run.handle.providerLeaseId,
      failureCode: "native_workspace_sync_out_entry_too_large",
      limit: { kind: "limit", violation: "entry_too_large", limit: "maxEntryBytes", max: DEFAULT_ARCHIVE_LIMITS.maxEntryBytes, path: "huge.bin" },
    });
    const lease = await prisma.environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } });
    expect(lease.status).toBe("pending_cleanup");
    expect(readStopIntent(lease.metadata, lease)).toMatchObject({ kind: "present", value: { leaseId: lease.id, runId: run.runId, providerLeaseId: run.handle.providerLeaseId } });
    expect(await prisma.nativeRunResult.count({ where: { runId: run.runId, schemaStatus: "accepted" } })).toBe(1);
    const codes = s.events.map((e) => e.code);
    expect(codes).not.toContain("workspace_export_omitted");
    expect(s.events.find((e) => e.code === "workspace.copyback_failed")).toMatchObject({ level: "error", payload: { actionId: action.id, leasePinned: "pinned", violation: "entry_too_large" } });

    // Files kept: the host has none of the sandbox's work, the sandbox still has all of it.
    expect(await readTree(world.hostPath)).toEqual(hostBefore);
    expect(await readFile(join(run.sandbox, "work.txt"), "utf8")).toBe("would be lost if omitted");
    expect((await stat(join(run.sandbox, "huge.bin"))).size).toBe(DEFAULT_ARCHIVE_LIMITS.maxEntryBytes + 1);

    // The release after it continues the stop-only intent: never a release for reuse or a destroy.
    const released = await releaseLeaseByPolicy(prisma, { forLease: () => world.provider }, { leaseId: lease.id, runId: run.runId, outcome: "failed" });
    expect(released.kind).toBe("pending_cleanup");
    expect(await readFile(join(run.sandbox, "work.txt"), "utf8")).toBe("would be lost if omitted");

    // Another finalization neither opens a second action nor omits: the coordinator is final.
    expect(await finalizeRun(world.deps(), { runId: run.runId })).toEqual({ kind: "not_finalizable", reason: "terminal_failure" });
    expect(await prisma.issueRecoveryAction.count({ where: { runId: run.runId } })).toBe(1);
    // The hold keeps the task's saved work: a wake is refused.
    await expect(wakeAgent(prisma, { companyId: world.companyId, issueId: run.issueId, actor: { type: "system", id: null } })).rejects.toMatchObject({ code: "recovery_hold_open" });
  });

  it("R-UA-3 colliding paths are held the same way: one action naming the collision, never an omission", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "docs/Readme.md": "one", "docs/README.md": "two" });
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "terminal_failure", code: "native_workspace_sync_out_case_collision" });
    const s = await held(run.runId);
    expect(s.actions).toHaveLength(1);
    expect(s.actions[0]).toMatchObject({ cause: EXPORT_LIMIT_CAUSE, status: "active" });
    expect(s.actions[0]?.nextAction).toMatch(/differ only by letter case/);
    expect(s.actions[0]?.nextAction).toMatch(/docs\/(Readme|README)\.md/);
    expect(s.events.map((e) => e.code)).not.toContain("workspace_export_omitted");
    expect((await prisma.environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } })).status).toBe("pending_cleanup");
    expect((await readTree(run.sandbox))["docs/README.md"]).toBe("two");
  });

  it("R-UA-1 an unsafe link never fails a completed task or asks for repair: it is left out, the work commits, no recovery action, the lease is not pinned", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "kept.txt": "kept", "escape": "->../../../../etc", "abs-link": "->/etc/passwd" });
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "committed" });
    expect((await readTree(world.hostPath))["kept.txt"]).toBe("kept");
    const s = await held(run.runId);
    expect(s.run.status).toBe("succeeded");
    expect(s.actions).toEqual([]);
    expect((await prisma.issue.findUniqueOrThrow({ where: { id: run.issueId } })).status).toBe("done");
    expect((await prisma.environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } })).status).toBe("active");
  });

  it("R-UA-3 an operator records the hand-made repair of a limit hold (restored) only once cleanup confirmed the sandbox stopped; the task and the run stay as they are", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "docs/Guide.md": "one", "docs/GUIDE.md": "two" });
    await finalizeRun(world.deps(), { runId: run.runId });
    const action = await prisma.issueRecoveryAction.findFirstOrThrow({ where: { runId: run.runId, cause: EXPORT_LIMIT_CAUSE } });
    const issue = await prisma.issue.findUniqueOrThrow({ where: { id: run.issueId } });
    const input = {
      companyId: world.companyId,
      issueId: run.issueId,
      actor: { type: "user" as const, id: null },
      actionId: action.id,
      outcome: "restored" as const,
      sourceIssueStatus: issue.status,
      executionReconciliation: { runId: run.runId, leaseId: run.handle.leaseId, runStatus: "failed" as const, noExternalActionsPerformed: false },
      workspaceRepairEvidence: { stopEvidence: "Provider console: sandbox stopped.", recoveredFiles: "docs/GUIDE.md copied to docs/GUIDE.md; docs/Guide.md renamed docs/Guide-2.md" },
    };
    // The sandbox is not confirmed stopped yet (this plugin cannot stop): refused, nothing written.
    await expect(resolveRecoveryAction(prisma, input)).rejects.toMatchObject({ code: "stop_receipt_missing" });
    expect((await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } })).status).toBe("active");

    // The cleanup's confirmed stop, as a stopping plugin leaves it.
    const lease = await prisma.environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } });
    const metadata = { ...(lease.metadata as Record<string, unknown>) };
    const intent = metadata[LEASE_METADATA_KEYS.stopIntent] as { requestId: string };
    delete metadata[LEASE_METADATA_KEYS.stopIntent];
    metadata[LEASE_METADATA_KEYS.stopReceipt] = { schema: STOP_RECEIPT_SCHEMA, method: "environmentStopLease", requestId: intent.requestId, pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId, stoppedAt: new Date().toISOString() };
    await prisma.environmentLease.update({ where: { id: lease.id }, data: { status: "released", releasedAt: new Date(), metadata: metadata as object } });

    await expect(resolveRecoveryAction(prisma, input)).resolves.toMatchObject({ actionId: action.id, runId: run.runId, outcome: "restored", status: "resolved" });
    expect(await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } })).toMatchObject({ status: "resolved", outcome: "restored" });
    expect((await prisma.issue.findUniqueOrThrow({ where: { id: run.issueId } })).status).toBe(issue.status);
    expect((await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("failed");
    // The sandbox's files are still there.
    expect((await readTree(run.sandbox))["docs/GUIDE.md"]).toBe("two");
  });
});
