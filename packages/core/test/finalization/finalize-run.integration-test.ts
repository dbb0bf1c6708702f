// finalizeRun against a real PostgreSQL, real files and a directory-backed provider whose
// exports are real tar streams: the happy path, the barrier, unsafe archives (R-UA-*),
// the unchanged snapshot (R-LK-6), conflicts, in-process retries (R-RR-1) and ownership (R-OWN-*).
import { existsSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { copybackProven } from "../../src/records/copyback-proven";
import { EXPORT_OMITTED_MESSAGE } from "../../src/finalization/export-policy";
import { finalizationLockKey } from "../../src/finalization/finalization-owner";
import { FINALIZATION_OWNER_KEY, readFinalizationOwner } from "../../src/records/finalization-owner-receipt";
import { FINALIZE_CHANGES_SCHEMA, MAX_RECORDED_PATHS, readFinalizeChanges } from "../../src/finalization/finalize-changes";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { SALVAGE_INFO_MESSAGE } from "../../src/copyback/archive/salvage";
import { buildWorld, CONTROLLER, preparedRun, readTree, writeTree, type World } from "./finalization-fixture";

const db = useTestDatabase();
let world: World;

beforeAll(async () => {
  world = await buildWorld(db.prisma(), db.url());
});

afterAll(async () => {
  await world?.cleanup();
});

async function state(runId: string) {
  const prisma = db.prisma();
  const run = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
  const coordinator = await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId } });
  const operations = await prisma.workspaceOperation.findMany({ where: { runId }, orderBy: { createdAt: "asc" } });
  const events = await prisma.runEvent.findMany({ where: { runId }, orderBy: { createdAt: "asc" } });
  const issue = await prisma.issue.findUniqueOrThrow({ where: { id: run.nativeIssueId } });
  return { run, coordinator, operations, events, issue };
}

/** What the happy path's sandbox wrote, in code-unit order. */
const WRITTEN_PATHS = ["edit.txt", "link-to-docs", "new", "new/file.txt"];

const finalizeOps = (s: Awaited<ReturnType<typeof state>>) => s.operations.filter((o) => o.phase === "workspace_finalize");

async function stagingEntries(): Promise<string[]> {
  const dir = join(world.instanceRoot, "staging");
  return existsSync(dir) ? readdir(dir) : [];
}

describe("finalizeRun", () => {
  it("commits the happy path: the host gets the sandbox's creations, edits, deletions and symlink; the barrier is written; the run ends committed", async () => {
    await writeTree(world.hostPath, { "keep.txt": "keep", "edit.txt": "old", "gone.txt": "bye", docs: null, "docs/readme.md": "hello" });
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "new/file.txt": "created", "link-to-docs": "->docs/readme.md" });
    await writeFile(join(run.sandbox, "edit.txt"), "new");
    await import("node:fs/promises").then((fs) => fs.rm(join(run.sandbox, "gone.txt")));
    let receiptDuringExport: unknown = null;
    world.provider.faults.onExport = async () => {
      const row = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: run.runId }, select: { runnerProfileJson: true } });
      receiptDuringExport = readFinalizationOwner(row.runnerProfileJson);
    };
    try {
      const outcome = await finalizeRun(world.deps(), { runId: run.runId });
      expect(outcome).toMatchObject({ kind: "committed", barrier: "written", counts: { written: 4, deleted: 1, unchanged: false } });
    } finally {
      world.provider.faults.onExport = undefined;
    }

    expect(await readTree(world.hostPath)).toEqual({
      docs: null,
      "docs/readme.md": "hello",
      "edit.txt": "new",
      "keep.txt": "keep",
      "link-to-docs": "->docs/readme.md",
      new: null,
      "new/file.txt": "created",
    });
    const s = await state(run.runId);
    expect(finalizeOps(s)).toHaveLength(1);
    expect(finalizeOps(s)[0]).toMatchObject({ status: "succeeded", errorCode: null, metadata: { written: 4, deleted: 1, unchanged: false } });
    // The run page names the files: the merge's relative paths, sorted, with the exact counts.
    expect(readFinalizeChanges(finalizeOps(s)[0]!.metadata)).toEqual({
      kind: "present",
      value: { schema: FINALIZE_CHANGES_SCHEMA, written: WRITTEN_PATHS, deleted: ["gone.txt"], writtenCount: 4, deletedCount: 1, truncated: false },
    });
    expect(JSON.stringify(finalizeOps(s)[0]!.metadata)).not.toContain(world.hostPath);
    expect(await copybackProven(db.prisma(), { companyId: world.companyId, runId: run.runId, issueId: run.issueId })).toBe(true);
    expect(s.coordinator).toMatchObject({ phase: "committed", attempt: 1, nextAttemptAt: null });
    expect(s.run).toMatchObject({ status: "succeeded", nativePhase: "committed" });
    expect(s.run.resultJson).toMatchObject({ finalizationPhase: "committed" });
    expect(s.issue.status).toBe("done");
    // R-OWN-7: the receipt was there during the copyback, with this controller's identity, and is cleared now.
    expect(receiptDuringExport).toMatchObject({
      kind: "receipt",
      receipt: { host: CONTROLLER.host, pid: CONTROLLER.pid, processStart: CONTROLLER.startTime, bootId: CONTROLLER.bootId },
    });
    expect(readFinalizationOwner(s.run.runnerProfileJson)).toEqual({ kind: "none" });
    const codes = s.events.map((e) => e.code);
    expect(codes).toEqual(expect.arrayContaining(["workspace.prepared", "workspace.export_started", "workspace.merged", "run.committed"]));
    expect(s.events.find((e) => e.code === "workspace.merged")?.payload).toMatchObject({ written: 4, deleted: 1 });
    expect(await stagingEntries()).toEqual([]);
  });

  it("R-FO-2 a succeeded workspace_prepare without a workspace_finalize is not proven, and finalization still exports", async () => {
    const run = await preparedRun(world);
    const key = { companyId: world.companyId, runId: run.runId, issueId: run.issueId };
    const before = await state(run.runId);
    expect(before.operations.map((o) => [o.phase, o.status])).toEqual([["workspace_prepare", "succeeded"]]);
    expect(await copybackProven(db.prisma(), key)).toBe(false);
    const exportsBefore = world.provider.exports;
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome.kind).toBe("committed");
    expect(world.provider.exports).toBe(exportsBefore + 1);
    expect(await copybackProven(db.prisma(), key)).toBe(true);
  });

  it("R-LK-6 an unchanged snapshot leaves concurrent host edits untouched and still writes the barrier", async () => {
    await writeTree(world.hostPath, { "shared.txt": "baseline" });
    const run = await preparedRun(world);
    // The host changes after the sandbox was seeded; the sandbox changes nothing.
    await writeFile(join(world.hostPath, "shared.txt"), "edited on the host meanwhile");
    await writeFile(join(world.hostPath, "host-only.txt"), "new on the host");
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "committed", counts: { written: 0, deleted: 0, unchanged: true } });
    const tree = await readTree(world.hostPath);
    expect(tree["shared.txt"]).toBe("edited on the host meanwhile");
    expect(tree["host-only.txt"]).toBe("new on the host");
    expect(finalizeOps(await state(run.runId))[0]).toMatchObject({
      status: "succeeded",
      metadata: { unchanged: true, changes: { written: [], deleted: [], writtenCount: 0, deletedCount: 0, truncated: false } },
    });
  });

  it("records at most MAX_RECORDED_PATHS paths per list, the first ones in sorted order, with the exact counts and truncated", async () => {
    const names = Array.from({ length: MAX_RECORDED_PATHS + 3 }, (_, i) => `many-${String(i).padStart(4, "0")}.txt`);
    await writeTree(world.hostPath, { "old-a.txt": "a", "old-b.txt": "b" });
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, Object.fromEntries(names.map((name) => [name, "x"])));
    await import("node:fs/promises").then(async (fs) => {
      await fs.rm(join(run.sandbox, "old-b.txt"));
      await fs.rm(join(run.sandbox, "old-a.txt"));
    });
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "committed", counts: { written: names.length, deleted: 2 } });
    const read = readFinalizeChanges(finalizeOps(await state(run.runId))[0]!.metadata);
    expect(read).toEqual({
      kind: "present",
      value: {
        schema: FINALIZE_CHANGES_SCHEMA,
        written: names.slice(0, MAX_RECORDED_PATHS),
        deleted: ["old-a.txt", "old-b.txt"],
        writtenCount: names.length,
        deletedCount: 2,
        truncated: true,
      },
    });
  });

  it("a merge conflict writes nothing to the host: operation failed with the structured list, coordinator terminal_failure, and the run ends failed with the task blocked in the same transaction", async () => {
    await writeTree(world.hostPath, { "conflict.txt": "baseline" });
    const run = await preparedRun(world);
    await writeFile(join(world.hostPath, "conflict.txt"), "host version");
    await writeFile(join(run.sandbox, "conflict.txt"), "sandbox version");
    await writeFile(join(run.sandbox, "would-be-new.txt"), "not written");
    const hostBefore = await readTree(world.hostPath);
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "conflict", conflicts: [{ path: "conflict.txt", kind: "both_changed" }] });
    expect(await readTree(world.hostPath)).toEqual(hostBefore);
    const s = await state(run.runId);
    expect(finalizeOps(s)[0]).toMatchObject({
      status: "failed",
      errorCode: "workspace_merge_conflict",
      metadata: { conflictCount: 1, conflicts: [{ path: "conflict.txt", kind: "both_changed" }] },
    });
    expect(s.coordinator).toMatchObject({ phase: "terminal_failure", failureCode: "workspace_merge_conflict", failureDetail: { conflictCount: 1 } });
    // A settled coordinator never leaves its run running.
    expect(s.run).toMatchObject({ status: "failed", errorCode: "workspace_merge_conflict" });
    expect(s.issue.status).toBe("blocked");
    expect(await copybackProven(db.prisma(), { companyId: world.companyId, runId: run.runId, issueId: run.issueId })).toBe(false);
    expect(readFinalizationOwner(s.run.runnerProfileJson)).toEqual({ kind: "none" });
    expect(await stagingEntries()).toEqual([]);
  });

  it("R-UA-2 an escaping symlink: the salvage export drops it, the fixed message goes to the run log at info, and the rest commits", async () => {
    const run = await preparedRun(world);
    await writeTree(run.sandbox, { "salvaged/ok.txt": "kept", "salvaged/escape": "->../../../../etc/passwd", "salvaged/inside": "->ok.txt" });
    const salvagesBefore = world.provider.salvages;
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "committed", barrier: "written" });
    expect(world.provider.salvages).toBe(salvagesBefore + 1);
    const tree = await readTree(world.hostPath);
    expect(tree["salvaged/ok.txt"]).toBe("kept");
    expect(tree["salvaged/inside"]).toBe("->ok.txt");
    expect(tree).not.toHaveProperty("salvaged/escape");
    const s = await state(run.runId);
    const salvaged = s.events.find((e) => e.code === "workspace.export_salvaged");
    expect(salvaged).toMatchObject({ level: "info", message: SALVAGE_INFO_MESSAGE });
    expect(finalizeOps(s)[0]).toMatchObject({ status: "succeeded", metadata: { stage: "salvage" } });
  });

  it("R-UA-3 an archive still rejected after salvage is omitted: info event, no warning, the accepted result commits and the host is untouched", async () => {
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "omitted.txt": "lost", "bad-link": "->/etc/passwd" });
    const hostBefore = await readTree(world.hostPath);
    world.provider.faults.unsafeSalvage = true;
    try {
      const outcome = await finalizeRun(world.deps(), { runId: run.runId });
      expect(outcome).toMatchObject({ kind: "omitted_export_committed" });
    } finally {
      world.provider.faults.unsafeSalvage = false;
    }
    expect(await readTree(world.hostPath)).toEqual(hostBefore);
    const s = await state(run.runId);
    const omitted = s.events.filter((e) => e.code === "workspace_export_omitted");
    expect(omitted).toHaveLength(1);
    expect(omitted[0]).toMatchObject({ level: "info", message: EXPORT_OMITTED_MESSAGE });
    // R-UA-4: neither the host path nor the link target reaches the event.
    const serialized = JSON.stringify(omitted[0]);
    expect(serialized).not.toContain(world.hostPath);
    expect(serialized).not.toContain("/etc/passwd");
    expect(serialized).not.toContain("bad-link");
    // No warning, no recovery action; the result stays authoritative (R-UA-1).
    expect(s.events.filter((e) => e.level === "warn" || e.level === "error")).toEqual([]);
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId: run.runId } })).toBe(0);
    expect(finalizeOps(s)[0]).toMatchObject({
      status: "succeeded",
      metadata: { omitted: true, written: 0, deleted: 0, changes: { written: [], deleted: [], writtenCount: 0, deletedCount: 0, truncated: false } },
    });
    expect(s.coordinator.phase).toBe("committed");
    expect(s.run.status).toBe("succeeded");
    expect(s.issue.status).toBe("done");
  });

  it("R-RR-1 transient export failures are retried in process and then commit", async () => {
    const run = await preparedRun(world);
    await writeTree(run.sandbox, { "after-retry.txt": "made it" });
    world.provider.faults.exportFailures = 2;
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome.kind).toBe("committed");
    expect((await readTree(world.hostPath))["after-retry.txt"]).toBe("made it");
    const s = await state(run.runId);
    expect(s.events.filter((e) => e.code === "workspace.copyback_retry")).toHaveLength(2);
    expect(finalizeOps(s)).toHaveLength(1);
  });

  it("R-RR-1 exhausted transient failures leave a failed operation and a retryable coordinator with a retry time; the next due attempt commits", async () => {
    const run = await preparedRun(world);
    await writeTree(run.sandbox, { "eventually.txt": "later" });
    world.provider.faults.exportFailures = 3;
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "retryable_failure", code: "provider_export_failed" });
    let s = await state(run.runId);
    expect(finalizeOps(s)[0]).toMatchObject({ status: "failed", errorCode: "provider_export_failed" });
    expect(s.coordinator.phase).toBe("retryable_failure");
    expect(s.coordinator.nextAttemptAt).not.toBeNull();
    expect((await readTree(world.hostPath))["eventually.txt"]).toBeUndefined();

    // R-OWN-3: not due yet -> nothing starts.
    expect(await finalizeRun(world.deps(), { runId: run.runId })).toEqual({ kind: "not_finalizable", reason: "retry_not_due" });
    expect(finalizeOps(await state(run.runId))).toHaveLength(1);

    const due = { ...world.deps(), now: () => new Date(s.coordinator.nextAttemptAt!.getTime() + 1) };
    expect((await finalizeRun(due, { runId: run.runId })).kind).toBe("committed");
    s = await state(run.runId);
    expect(finalizeOps(s).map((o) => o.status)).toEqual(["failed", "succeeded"]);
    expect(s.coordinator).toMatchObject({ phase: "committed", attempt: 2 });
    expect((await readTree(world.hostPath))["eventually.txt"]).toBe("later");
  });

  it("R-OWN-2 a busy advisory lock returns busy and writes nothing", async () => {
    const run = await preparedRun(world);
    const holder = new pg.Client({ connectionString: db.url() });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [finalizationLockKey(world.companyId, run.runId)]);
      const before = await state(run.runId);
      const exportsBefore = world.provider.exports;
      expect(await finalizeRun(world.deps(), { runId: run.runId })).toEqual({ kind: "busy", reason: "lock_held" });
      const after = await state(run.runId);
      expect(after.operations).toEqual(before.operations);
      expect(after.coordinator).toEqual(before.coordinator);
      expect(after.events).toHaveLength(before.events.length);
      expect(after.run.runnerProfileJson).toEqual(before.run.runnerProfileJson);
      expect(world.provider.exports).toBe(exportsBefore);
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
    }
    expect((await finalizeRun(world.deps(), { runId: run.runId })).kind).toBe("committed");
  });

  it("R-ORP-4 a receipt of a controller on another host is never overwritten: owner_unverified, one board hold, nothing else written", async () => {
    const run = await preparedRun(world);
    const foreign = { token: "t".repeat(24), host: "other-host", pid: 7, processStart: "1", bootId: "b" };
    await db.prisma().$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json || jsonb_build_object(${FINALIZATION_OWNER_KEY}::text, ${JSON.stringify(foreign)}::jsonb) WHERE id = ${run.runId}::uuid`;
    const before = await state(run.runId);
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "owner_unverified", reason: "controller_on_other_host" });
    const after = await state(run.runId);
    expect(after.operations).toEqual(before.operations);
    expect(after.coordinator).toEqual(before.coordinator);
    expect(readFinalizationOwner(after.run.runnerProfileJson)).toEqual({ kind: "receipt", receipt: foreign });
    const actions = await db.prisma().issueRecoveryAction.findMany({ where: { runId: run.runId } });
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ cause: "native_workspace_finalization_owner_unverified", ownerType: "board", status: "active" });
  });

  it("R-OWN-4 a committed run is not finalized twice", async () => {
    const run = await preparedRun(world);
    expect((await finalizeRun(world.deps(), { runId: run.runId })).kind).toBe("committed");
    const before = await state(run.runId);
    const exportsBefore = world.provider.exports;
    expect(await finalizeRun(world.deps(), { runId: run.runId })).toEqual({ kind: "already_committed" });
    const after = await state(run.runId);
    expect(world.provider.exports).toBe(exportsBefore);
    expect(after.operations).toEqual(before.operations);
    expect(after.coordinator).toEqual(before.coordinator);
    expect(readFinalizationOwner(after.run.runnerProfileJson)).toEqual({ kind: "none" });
  });

  it("R-OWN-4 a barrier found under ownership skips the export and goes straight to arbitration", async () => {
    const run = await preparedRun(world, "done");
    // A previous finalizer wrote the barrier and stopped before committing.
    await db.prisma().workspaceOperation.create({
      data: { companyId: world.companyId, runId: run.runId, issueId: run.issueId, phase: "workspace_finalize", status: "succeeded", metadata: { written: 0, deleted: 0, unchanged: true }, finishedAt: new Date() },
    });
    await db.prisma().nativeRunFinalization.update({ where: { runId: run.runId }, data: { phase: "workspace_finalizing", attempt: 1 } });
    const exportsBefore = world.provider.exports;
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "committed", barrier: "reused", counts: null });
    expect(world.provider.exports).toBe(exportsBefore);
    const s = await state(run.runId);
    expect(s.coordinator.phase).toBe("committed");
    expect(s.issue.status).toBe("done");
    expect(finalizeOps(s)).toHaveLength(1);
  });

  it("R-OWN-9 a lock connection lost mid-export stops the copyback before any host write; the joined owner clears its receipt and the next owner copies and commits", async () => {
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "before-loss.txt": "copied" });
    world.provider.faults.onExport = async () => {
      await db.prisma().$queryRaw`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'copyback-finalization-owner' AND datname = current_database()`;
    };
    try {
      await expect(finalizeRun(world.deps(), { runId: run.runId })).rejects.toMatchObject({ code: "finalization_ownership_lost" });
    } finally {
      world.provider.faults.onExport = undefined;
    }
    let s = await state(run.runId);
    // The merge's authorize hook found the lock gone: nothing reached the host, no barrier.
    expect((await readTree(world.hostPath))["before-loss.txt"]).toBeUndefined();
    expect(s.coordinator.phase).toBe("workspace_finalizing");
    expect(s.run.status).toBe("running");
    expect(await copybackProven(db.prisma(), { companyId: world.companyId, runId: run.runId, issueId: run.issueId })).toBe(false);
    // The copyback was joined before the token went: the receipt is cleared, the next owner may proceed.
    expect(readFinalizationOwner(s.run.runnerProfileJson)).toEqual({ kind: "none" });

    expect(await finalizeRun(world.deps(), { runId: run.runId })).toMatchObject({ kind: "committed", barrier: "written" });
    s = await state(run.runId);
    expect(s.coordinator.phase).toBe("committed");
    expect(s.issue.status).toBe("done");
    expect((await readTree(world.hostPath))["before-loss.txt"]).toBe("copied");
  });

  it("R-OWN-9 a lock connection lost after the barrier: publication fails, the barrier stands, nothing is committed, and the next owner commits from the barrier", async () => {
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "after-barrier.txt": "copied" });
    // Fault injected inside the barrier's own transaction: the owner's lock backend is terminated
    // as the barrier commits, so the next (commit) transaction finds the connection gone.
    const prisma = db.prisma();
    await prisma.$executeRawUnsafe(`CREATE OR REPLACE FUNCTION test_kill_owner() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.code = 'workspace.merged' THEN
          PERFORM pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'copyback-finalization-owner' AND datname = current_database();
        END IF;
        RETURN NEW;
      END $$`);
    await prisma.$executeRawUnsafe(`CREATE TRIGGER test_kill_owner AFTER INSERT ON run_events FOR EACH ROW EXECUTE FUNCTION test_kill_owner()`);
    try {
      await expect(finalizeRun(world.deps(), { runId: run.runId })).rejects.toMatchObject({ code: "finalization_ownership_lost" });
    } finally {
      await prisma.$executeRawUnsafe(`DROP TRIGGER test_kill_owner ON run_events`);
      await prisma.$executeRawUnsafe(`DROP FUNCTION test_kill_owner()`);
    }
    let s = await state(run.runId);
    expect(s.coordinator.phase).toBe("arbitrating");
    expect(s.run.status).toBe("running");
    expect(s.issue.status).toBe("in_progress");
    expect(await copybackProven(db.prisma(), { companyId: world.companyId, runId: run.runId, issueId: run.issueId })).toBe(true);
    expect(readFinalizationOwner(s.run.runnerProfileJson)).toEqual({ kind: "none" });

    const exportsBefore = world.provider.exports;
    expect(await finalizeRun(world.deps(), { runId: run.runId })).toMatchObject({ kind: "committed", barrier: "reused" });
    expect(world.provider.exports).toBe(exportsBefore);
    s = await state(run.runId);
    expect(s.coordinator.phase).toBe("committed");
    expect(s.issue.status).toBe("done");
  });

  it("R-OWN-13 with idle_in_transaction_session_timeout set, the owner probes its lock transaction and keeps it through a slow export", async () => {
    const run = await preparedRun(world);
    const database = db.name();
    await db.prisma().$executeRawUnsafe(`ALTER DATABASE "${database}" SET idle_in_transaction_session_timeout = '600ms'`);
    world.provider.faults.onExport = () => new Promise((resolve) => setTimeout(resolve, 1_500));
    try {
      expect((await finalizeRun(world.deps(), { runId: run.runId })).kind).toBe("committed");
    } finally {
      world.provider.faults.onExport = undefined;
      await db.prisma().$executeRawUnsafe(`ALTER DATABASE "${database}" RESET idle_in_transaction_session_timeout`);
    }
  });

  it("R-OWN-6 the lock connection set up while the run is read is closed when no ownership attempt follows (an unknown run, a run that is not native)", async () => {
    // Connections of this test database that the finalizer opened for ownership.
    const ownerConnections = async () =>
      Number(
        (
          await db.prisma().$queryRaw<{ n: bigint }[]>`
            SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'copyback-finalization-owner' AND pid <> pg_backend_pid()`
        )[0]?.n ?? 0,
      );
    const closed = async () => {
      // A closed client's backend leaves pg_stat_activity a moment after the client is done.
      for (let i = 0; i < 100 && (await ownerConnections()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
      return ownerConnections();
    };
    const legacy = await preparedRun(world);
    await db.prisma().heartbeatRun.update({ where: { id: legacy.runId }, data: { runtimeMode: "legacy" } });
    for (let i = 0; i < 5; i++) {
      await expect(finalizeRun(world.deps(), { runId: "00000000-0000-4000-8000-000000000000" })).rejects.toMatchObject({ kind: "not_found" });
      await expect(finalizeRun(world.deps(), { runId: legacy.runId })).rejects.toMatchObject({ code: "run_not_native" });
    }
    expect(await closed()).toBe(0);
    await db.prisma().heartbeatRun.update({ where: { id: legacy.runId }, data: { runtimeMode: "native" } });
    expect((await finalizeRun(world.deps(), { runId: legacy.runId })).kind).toBe("committed");
    expect(await closed()).toBe(0);
  });

  it("the attempt's run events, written while the copyback goes on, are all there in the order they were made, none after the barrier", async () => {
    const run = await preparedRun(world);
    await writeFile(join(run.sandbox, "events.txt"), "new");
    expect((await finalizeRun(world.deps(), { runId: run.runId })).kind).toBe("committed");
    const s = await state(run.runId);
    const order = ["workspace.export_started", "workspace.exported", "workspace.merged", "run.committed"];
    const events = s.events.filter((e) => order.includes(e.code));
    expect(events.map((e) => e.code)).toEqual(order);
    const times = events.map((e) => e.createdAt.getTime());
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    const barrier = finalizeOps(s)[0]!;
    expect(barrier.status).toBe("succeeded");
    // The export's events were written before the barrier that closes their attempt.
    for (const e of events.slice(0, 2)) expect(e.createdAt.getTime()).toBeLessThanOrEqual(barrier.finishedAt!.getTime());
    expect(events[1]!.payload).toMatchObject({ path: "full", try: 1 });
    expect(await stagingEntries()).toEqual([]);
  });

  it("a run without an accepted result is not finalizable and nothing is written; an unknown run is not found", async () => {
    const { claimedRun } = await import("./finalization-fixture");
    const run = await claimedRun(world);
    const before = await state(run.runId);
    expect(await finalizeRun(world.deps(), { runId: run.runId })).toEqual({ kind: "not_finalizable", reason: "no_accepted_result" });
    const after = await state(run.runId);
    expect(after.operations).toEqual(before.operations);
    expect(after.coordinator).toEqual(before.coordinator);
    expect(readFinalizationOwner(after.run.runnerProfileJson)).toEqual({ kind: "none" });
    await expect(finalizeRun(world.deps(), { runId: "00000000-0000-4000-8000-000000000000" })).rejects.toMatchObject({ kind: "not_found" });
  });
});
