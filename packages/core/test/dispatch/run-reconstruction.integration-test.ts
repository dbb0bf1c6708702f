// R-RC-5 end to end on a real PostgreSQL, a real local sandbox and real processes: a recorded
// reconstruction is delivered as a fresh run, claimed, rechecked immediately before the provider
// handoff and executed; the agent's COPYBACK_RECONSTRUCTION carries the description, the selected
// attachments with their hashes and the observed outcomes, and the fresh session's own files reach
// the host through the ordinary copyback. A source changed after the claim stops the run at the
// handoff, before any sandbox is acquired.
import { writeFile, readFile, rm } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { DirectoryMergeLocks } from "../../src/copyback/locks/index";
import { executeRun, type ExecuteRunDeps } from "../../src/dispatch/execute-run";
import { readProcessIdentity } from "../../src/process/read-process-identity";
import { createDefaultRegistry } from "../../src/providers/index";
import { reconstructWorkspace } from "../../src/recovery/operator/reconstruct-workspace";
import { deliverReconstruction } from "../../src/recovery/reconstruction/deliver-intent";
import { claimQueuedRuns } from "../../src/dispatch/claim-runs";
import { finalizationLockKey } from "../../src/finalization/finalization-owner";
import { createDestroyedSource, reconstructionRequestFor, type DestroyedSource } from "../support/destroyed-source";
import { createExportHoldPlace, exportHoldInstanceRoot, type ExportHoldPlace } from "../support/export-hold";
import { submitResult } from "./dispatch-fixture";

const db = useTestDatabase({ poolSize: 8 });
let home = "";
let place: ExportHoldPlace;
let deps: ExecuteRunDeps;

beforeAll(async () => {
  home = await exportHoldInstanceRoot();
  place = await createExportHoldPlace(db.prisma(), "Reconstruction run");
  // The fresh session writes what it was told into its workspace, then submits its result.
  await db.prisma().agent.update({
    where: { id: place.agentId },
    data: { command: ["/bin/sh", "-c", `printf '%s' "$COPYBACK_RECONSTRUCTION" > reconstruction.json && ${submitResult()}`], adapterConfig: { timeoutSeconds: 60 } },
  });
  const controller = await readProcessIdentity(process.pid);
  if (!controller) throw new Error("no /proc identity for the test process");
  deps = { db: db.prisma(), registry: createDefaultRegistry({ instanceRoot: home, localIsolation: "none" }), instanceRoot: home, locks: new DirectoryMergeLocks({ instanceRoot: home }), databaseUrl: db.url(), controller, retry: { backoffMs: 0 } };
});
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

async function delivered(source: DestroyedSource): Promise<string> {
  const recorded = await reconstructWorkspace(
    { db: db.prisma(), instanceRoot: home },
    await reconstructionRequestFor(db.prisma(), place.companyId, source, {
      externalActionOutcomes: [{ action: "opened a pull request", outcome: "performed", evidence: "PR #12" }],
      requestId: `run-${source.actionId}`,
    }),
  );
  const outcome = await deliverReconstruction({ db: db.prisma(), instanceRoot: home }, recorded.intent.id);
  if (outcome.kind !== "delivered") throw new Error(`not delivered: ${JSON.stringify(outcome)}`);
  return outcome.runId;
}

async function claimAndExecute(runId: string): Promise<void> {
  const claimed = await claimQueuedRuns(db.prisma(), { limit: 10, controller: deps.controller, instanceRoot: home });
  const mine = claimed.find((c) => c.runId === runId);
  if (!mine) throw new Error(`run ${runId} was not claimed`);
  await executeRun(deps, mine, new AbortController().signal);
}

describe("a reconstruction's fresh session (R-RC-5)", () => {
  it("R-RC-5 the delivered run passes claim and handoff, its agent gets the context and its own work is copied back; the old run stays failed", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const runId = await delivered(source);
    await claimAndExecute(runId);
    const run = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status, JSON.stringify(await db.prisma().runEvent.findMany({ where: { runId }, select: { code: true, message: true } }))).toBe("succeeded");
    const workspace = await db.prisma().executionWorkspace.findFirstOrThrow({ where: { issues: { some: { id: source.issueId } } } });
    const context = JSON.parse(await readFile(path.join(workspace.hostPath, "reconstruction.json"), "utf8")) as Record<string, unknown>;
    const attachment = await db.prisma().issueAttachment.findUniqueOrThrow({ where: { id: source.attachmentIds[0] } });
    expect(context).toMatchObject({
      schema: "copyback.reconstruction-context.v1",
      sourceRunId: source.runId,
      description: "Rebuild the README changes described in notes.md",
      attachments: [{ attachmentId: attachment.id, sha256: attachment.sha256, sizeBytes: 37, name: "notes.md", contentUrl: `/api/issues/${source.issueId}/attachments/${attachment.id}/content` }],
      externalActionOutcomes: [{ action: "opened a pull request", outcome: "performed", evidence: "PR #12" }],
    });
    // Not a replay: the old run, its failed finalization and its destroyed lease are as they were.
    expect(await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: source.runId } })).toMatchObject({ status: "failed" });
    expect(await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: source.runId } })).toMatchObject({ phase: "terminal_failure", attempt: 3 });
    expect(await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: source.leaseId } })).toMatchObject({ status: "destroyed" });
  });

  it("R-RC-5 an attachment changed after the claim stops the run immediately before the provider handoff: no sandbox is acquired", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const runId = await delivered(source);
    const claimed = await claimQueuedRuns(db.prisma(), { limit: 10, controller: deps.controller, instanceRoot: home });
    const mine = claimed.find((c) => c.runId === runId);
    if (!mine) throw new Error("not claimed");
    const attachment = await db.prisma().issueAttachment.findUniqueOrThrow({ where: { id: source.attachmentIds[0] } });
    await writeFile(path.join(home, attachment.storagePath), "changed between claim and handoff\n");
    await executeRun(deps, mine, new AbortController().signal);
    expect(await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ status: "failed", errorCode: "attachment_changed" });
    expect(await db.prisma().environmentLease.count({ where: { runId } })).toBe(0);
    expect(await db.prisma().runEvent.count({ where: { runId, code: "agent.started" } })).toBe(0);
    // Nothing was prepared, so no file obligation holds the task; the reconstruction's hold is open again.
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId } })).toBe(0);
    expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: source.actionId } })).toMatchObject({ status: "active" });
    expect(await db.prisma().reconstructionIntent.findFirstOrThrow({ where: { recoveryActionId: source.actionId } })).toMatchObject({ status: "cancelled", deliveredRunId: runId });
  });

  // CI of cf9e10b (e2e auth-reconstruction, load 8): a delivered run was withdrawn at its claim
  // because a sweep held the source run's finalization lock for one transaction. A lock that is
  // only busy (no owner receipt, no claimed lease) is transient: the run waits, nothing is withdrawn.
  async function holdFinalizationLock(source: DestroyedSource): Promise<pg.Client> {
    const holder = new pg.Client({ connectionString: db.url(), application_name: "reconstruction-busy-lock" });
    await holder.connect();
    await holder.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [finalizationLockKey(place.companyId, source.runId)]);
    return holder;
  }

  it("R-RC-5 a source run's finalization lock that is only busy at the claim leaves the delivered run queued; claimed once it is free, the run succeeds", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const runId = await delivered(source);
    const holder = await holdFinalizationLock(source);
    try {
      const claimed = await claimQueuedRuns(db.prisma(), { limit: 10, controller: deps.controller, instanceRoot: home });
      expect(claimed.map((c) => c.runId)).not.toContain(runId);
      expect(await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ status: "queued", errorCode: null });
      expect(await db.prisma().reconstructionIntent.findFirstOrThrow({ where: { recoveryActionId: source.actionId } })).toMatchObject({ status: "delivered" });
      expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: source.actionId } })).toMatchObject({ status: "resolved" });
    } finally {
      await holder.end();
    }
    await claimAndExecute(runId);
    expect(await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ status: "succeeded" });
  });

  it("R-RC-5 a finalization lock busy for a moment at the handoff is waited out: the run is admitted and succeeds", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const runId = await delivered(source);
    const claimed = await claimQueuedRuns(db.prisma(), { limit: 10, controller: deps.controller, instanceRoot: home });
    const mine = claimed.find((c) => c.runId === runId);
    if (!mine) throw new Error("not claimed");
    const holder = await holdFinalizationLock(source);
    const released = new Promise((r) => setTimeout(r, 1_000)).then(() => holder.end());
    await executeRun(deps, mine, new AbortController().signal);
    await released;
    expect(await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ status: "succeeded" });
    expect(await db.prisma().reconstructionIntent.findFirstOrThrow({ where: { recoveryActionId: source.actionId } })).toMatchObject({ status: "delivered" });
  });

  it("R-RC-5 a finalization lock still held after the handoff's wait refuses the run as an active copyback owner and reopens the hold", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const runId = await delivered(source);
    const claimed = await claimQueuedRuns(db.prisma(), { limit: 10, controller: deps.controller, instanceRoot: home });
    const mine = claimed.find((c) => c.runId === runId);
    if (!mine) throw new Error("not claimed");
    const holder = await holdFinalizationLock(source);
    try {
      await executeRun(deps, mine, new AbortController().signal);
    } finally {
      await holder.end();
    }
    expect(await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ status: "failed", errorCode: "active_copyback_owner" });
    expect(await db.prisma().environmentLease.count({ where: { runId } })).toBe(0);
    expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: source.actionId } })).toMatchObject({ status: "active" });
    expect(await db.prisma().reconstructionIntent.findFirstOrThrow({ where: { recoveryActionId: source.actionId } })).toMatchObject({ status: "cancelled" });
  }, 30_000);
});
