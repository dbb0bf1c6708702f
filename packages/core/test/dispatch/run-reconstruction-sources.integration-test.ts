// R-RC-5 ("the agent must verify the selected attachments before rebuilding files"), end to end on
// a real PostgreSQL, a real local sandbox (as a plain process group and under bubblewrap) and a
// real agent process: the default local environment has no network, so the controller places each
// saved source in the sandbox outside its workspace; the agent (node -e) reads the `path` it is told
// in COPYBACK_RECONSTRUCTION, verifies the sha256 and size and writes what it found; the placed files
// never reach the host workspace. Bytes changed on disk after the handoff recheck (the stored
// attachment tampered while the sandbox is seeded) refuse the run before its agent starts, place
// nothing and change nothing in the host; a provider without `placeInputs` keeps the contentUrl
// delivery and the context says so.
import { lstat, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { DirectoryMergeLocks } from "../../src/copyback/locks/index";
import { executeRun, type ExecuteRunDeps } from "../../src/dispatch/execute-run";
import { readProcessIdentity } from "../../src/process/read-process-identity";
import { createDefaultRegistry, createLocalProvider, PROVIDER_CAPABILITIES, ProviderRegistry, type EnvironmentProvider } from "../../src/providers/index";
import { usableBubblewrap } from "../../src/providers/local/bubblewrap";
import { hostSearchPath } from "../../src/providers/local/env";
import { reconstructWorkspace, type ReconstructWorkspaceInput } from "../../src/recovery/operator/reconstruct-workspace";
import { deliverReconstruction } from "../../src/recovery/reconstruction/deliver-intent";
import { claimQueuedRuns } from "../../src/dispatch/claim-runs";
import { createDestroyedSource, createStoredAttachment, reconstructionRequestFor, type DestroyedSource } from "../support/destroyed-source";
import { createExportHoldPlace, exportHoldInstanceRoot, type ExportHoldPlace } from "../support/export-hold";
import { readTree, RESULT_IN_REVIEW } from "./dispatch-fixture";

const db = useTestDatabase({ poolSize: 8 });
const bubblewrapHere = (await usableBubblewrap(hostSearchPath())) !== null;
let home = "";
let place: ExportHoldPlace;
let controller: ExecuteRunDeps["controller"];

// The fresh session: reads each attachment at its path, verifies it, tries to change it when it is
// read-only, and writes what it found into its workspace (copied back), then submits its result.
const AGENT = `
const fs = require("fs"), crypto = require("crypto");
// R-RC-5: the inline variable, or (a context too large to inline) where its file is.
const inline = JSON.parse(process.env.COPYBACK_RECONSTRUCTION);
const contextFile = process.env.COPYBACK_RECONSTRUCTION_FILE ?? null;
const fileText = contextFile ? fs.readFileSync(contextFile, "utf8") : null;
const context = inline.inlined === false ? JSON.parse(fs.readFileSync(inline.file, "utf8")) : inline;
const delivery = {
  inlined: inline.inlined !== false,
  reference: inline.inlined === false ? inline : null,
  contextFile,
  fileMatches: fileText === null ? null : JSON.stringify(JSON.parse(fileText)) === JSON.stringify(context),
  fileSha256: fileText === null ? null : crypto.createHash("sha256").update(fileText).digest("hex"),
  fileBytes: fileText === null ? null : Buffer.byteLength(fileText),
  outcomes: context.externalActionOutcomes.length,
  evidenceChars: context.externalActionOutcomes.reduce((n, o) => n + (o.evidence ?? "").length, 0),
  fileWrite: "not tried",
};
if (contextFile && context.sources.readOnly) { try { fs.writeFileSync(contextFile, "forged"); delivery.fileWrite = "allowed"; } catch { delivery.fileWrite = "refused"; } }
const attachments = context.attachments.map((a) => {
  if (!a.path) return { attachmentId: a.attachmentId, path: null, contentUrl: a.contentUrl, verified: null };
  const bytes = fs.readFileSync(a.path);
  const verified = bytes.length === a.sizeBytes && crypto.createHash("sha256").update(bytes).digest("hex") === a.sha256;
  let write = "not tried";
  if (context.sources.readOnly) { try { fs.writeFileSync(a.path, "forged"); write = "allowed"; } catch { write = "refused"; } }
  return { attachmentId: a.attachmentId, path: a.path, contentUrl: a.contentUrl, verified, write };
});
fs.writeFileSync("verified.json", JSON.stringify({ sources: context.sources, instructions: context.instructions, attachments, delivery }));
fs.writeFileSync(process.env.COPYBACK_RESULT_FILE, ${JSON.stringify(RESULT_IN_REVIEW)});
`;

beforeAll(async () => {
  home = await exportHoldInstanceRoot();
  place = await createExportHoldPlace(db.prisma(), "Reconstruction sources");
  await db.prisma().agent.update({ where: { id: place.agentId }, data: { command: [process.execPath, "-e", AGENT], adapterConfig: { timeoutSeconds: 60 } } });
  const identity = await readProcessIdentity(process.pid);
  if (!identity) throw new Error("no /proc identity for the test process");
  controller = identity;
});
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

function depsWith(registry: ProviderRegistry): ExecuteRunDeps {
  return { db: db.prisma(), registry, instanceRoot: home, locks: new DirectoryMergeLocks({ instanceRoot: home }), databaseUrl: db.url(), controller, retry: { backoffMs: 0 } };
}

/** A registry whose builtin.local plugin is the real local provider changed by `change`. */
function wrappedLocal(isolation: "none" | "bubblewrap", change: (local: EnvironmentProvider) => EnvironmentProvider): ProviderRegistry {
  const registry = new ProviderRegistry();
  registry.register(change(createLocalProvider({ instanceRoot: home, isolation })));
  return registry;
}

async function deliveredRun(source: DestroyedSource, overrides: Partial<ReconstructWorkspaceInput> = {}): Promise<string> {
  const recorded = await reconstructWorkspace({ db: db.prisma(), instanceRoot: home }, await reconstructionRequestFor(db.prisma(), place.companyId, source, { requestId: `sources-${source.actionId}`, ...overrides }));
  const outcome = await deliverReconstruction({ db: db.prisma(), instanceRoot: home }, recorded.intent.id);
  if (outcome.kind !== "delivered") throw new Error(`not delivered: ${JSON.stringify(outcome)}`);
  return outcome.runId;
}

async function claimAndExecute(deps: ExecuteRunDeps, runId: string): Promise<void> {
  const claimed = await claimQueuedRuns(db.prisma(), { limit: 10, controller, instanceRoot: home });
  const mine = claimed.find((c) => c.runId === runId);
  if (!mine) throw new Error(`run ${runId} was not claimed`);
  await executeRun(deps, mine, new AbortController().signal);
}

async function hostPathOf(issueId: string): Promise<string> {
  return (await db.prisma().executionWorkspace.findFirstOrThrow({ where: { issues: { some: { id: issueId } } } })).hostPath;
}

const events = async (runId: string) => db.prisma().runEvent.findMany({ where: { runId }, select: { code: true, message: true, payload: true }, orderBy: { createdAt: "asc" } });
/** The log without its payloads (a large context's delivery event is megabytes long). */
const codes = async (runId: string) => (await events(runId)).map((e) => `${e.code}: ${e.message.slice(0, 300)}`);

/** A second saved source beside notes.md, with a name that is not one safe path component as it is. */
async function withSecondSource(source: DestroyedSource): Promise<DestroyedSource> {
  const second = await createStoredAttachment(db.prisma(), { companyId: place.companyId, issueId: source.issueId }, home, "plan v2.md", "1. rebuild README\n2. keep the PR\n");
  return { ...source, attachmentIds: [...source.attachmentIds, second] };
}

describe.each([
  { isolation: "none" as const, name: "as a plain process group" },
  { isolation: "bubblewrap" as const, name: "under bubblewrap" },
])("a reconstruction's saved sources reach its agent without network ($name)", ({ isolation }) => {
  it.skipIf(isolation === "bubblewrap" && !bubblewrapHere)(
    "R-RC-5 the agent reads each attachment at its path, verifies the sha256 and size, and the placed files are not in the committed host workspace",
    async () => {
      const source = await withSecondSource(await createDestroyedSource(db.prisma(), place, home));
      const runId = await deliveredRun(source);
      await claimAndExecute(depsWith(createDefaultRegistry({ instanceRoot: home, localIsolation: isolation })), runId);
      const run = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
      expect(run.status, JSON.stringify(await events(runId))).toBe("succeeded");

      const hostPath = await hostPathOf(source.issueId);
      const found = JSON.parse(await readFile(path.join(hostPath, "verified.json"), "utf8")) as {
        sources: { delivery: string; directory: string; readOnly: boolean };
        instructions: string;
        attachments: { attachmentId: string; path: string; contentUrl: string; verified: boolean; write: string }[];
      };
      const lease = await db.prisma().environmentLease.findFirstOrThrow({ where: { runId } });
      const inputs = path.join(home, "sandboxes", lease.providerLeaseId as string, "control", "inputs");
      expect(found.sources).toEqual({ delivery: "sandbox", directory: inputs, readOnly: isolation === "bubblewrap" });
      expect(found.instructions).toMatch(/no network is needed/);
      expect(found.attachments).toEqual([
        { attachmentId: source.attachmentIds[0], path: path.join(inputs, source.attachmentIds[0] as string, "notes.md"), contentUrl: `/api/issues/${source.issueId}/attachments/${source.attachmentIds[0]}/content`, verified: true, write: isolation === "bubblewrap" ? "refused" : "not tried" },
        { attachmentId: source.attachmentIds[1], path: path.join(inputs, source.attachmentIds[1] as string, "plan v2.md"), contentUrl: `/api/issues/${source.issueId}/attachments/${source.attachmentIds[1]}/content`, verified: true, write: isolation === "bubblewrap" ? "refused" : "not tried" },
      ]);
      // Outside the exported workspace: the host got the agent's own file and nothing else.
      expect(Object.keys(await readTree(hostPath))).toEqual(["verified.json"]);
      expect(inputs.startsWith(path.join(home, "sandboxes", lease.providerLeaseId as string, "workspace"))).toBe(false);
      // The environment had no network: nothing was fetched (the local default, allowNetwork false).
      expect((await db.prisma().environment.findUniqueOrThrow({ where: { id: place.environmentId } })).config).not.toMatchObject({ allowNetwork: true });
      expect((await events(runId)).map((e) => e.code)).toContain("reconstruction.sources_placed");
      expect(lease.metadata).toMatchObject({ isolated: isolation === "bubblewrap" });
    },
  );
});

/**
 * The largest intent the operator can record (reconstruction/contract.ts): a 20,000-character
 * description and 200 external actions, each a 2,000-character action with 20,000 characters of
 * evidence. As one JSON string it is about 4.4 MB: far past the 128 KiB Linux allows one
 * environment string (MAX_ARG_STRLEN) and past the whole argv+env limit (ARG_MAX).
 */
const LARGEST_INTENT: Partial<ReconstructWorkspaceInput> = {
  description: `Rebuild the README changes described in notes.md. ${"d".repeat(19_000)}`,
  externalActionOutcomes: Array.from({ length: 200 }, (_, i) => ({
    action: `${i}: ${"a".repeat(1_990)}`,
    outcome: "not_performed" as const,
    evidence: `${i}: ${"e".repeat(19_990)}`,
  })),
};

interface Verified {
  sources: { delivery: string; directory: string; readOnly: boolean };
  attachments: { attachmentId: string; path: string | null; verified: boolean | null }[];
  delivery: {
    inlined: boolean;
    reference: Record<string, unknown> | null;
    contextFile: string | null;
    fileMatches: boolean | null;
    fileSha256: string | null;
    fileBytes: number | null;
    outcomes: number;
    evidenceChars: number;
    fileWrite: string;
  };
}

describe.each([
  { isolation: "none" as const, name: "as a plain process group" },
  { isolation: "bubblewrap" as const, name: "under bubblewrap" },
])("the reconstruction context survives any size ($name)", ({ isolation }) => {
  it.skipIf(isolation === "bubblewrap" && !bubblewrapHere)(
    "R-RC-5 a context too large for one environment variable reaches the agent as a read-only file among its inputs; the variable says where it is and that it was not inlined",
    async () => {
      const source = await createDestroyedSource(db.prisma(), place, home);
      const runId = await deliveredRun(source, LARGEST_INTENT);
      await claimAndExecute(depsWith(createDefaultRegistry({ instanceRoot: home, localIsolation: isolation })), runId);
      expect((await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status, JSON.stringify(await codes(runId))).toBe("succeeded");

      const hostPath = await hostPathOf(source.issueId);
      const found = JSON.parse(await readFile(path.join(hostPath, "verified.json"), "utf8")) as Verified;
      const lease = await db.prisma().environmentLease.findFirstOrThrow({ where: { runId } });
      const inputs = path.join(home, "sandboxes", lease.providerLeaseId as string, "control", "inputs");
      const file = path.join(inputs, "reconstruction.json");
      expect(found.delivery).toMatchObject({ inlined: false, contextFile: file, fileMatches: true, outcomes: 200, evidenceChars: (LARGEST_INTENT.externalActionOutcomes ?? []).reduce((n, o) => n + (o.evidence ?? "").length, 0) });
      expect(found.delivery.reference).toEqual({
        schema: "copyback.reconstruction-context-ref.v1",
        inlined: false,
        file,
        sizeBytes: found.delivery.fileBytes,
        sha256: found.delivery.fileSha256,
        reason: expect.stringContaining("64 KiB"),
      });
      expect(found.delivery.fileBytes).toBeGreaterThan(4_000_000);
      expect(found.attachments).toEqual([{ attachmentId: source.attachmentIds[0], path: path.join(inputs, source.attachmentIds[0] as string, "notes.md"), contentUrl: expect.any(String), verified: true, write: expect.any(String) }]);
      // Placed among the inputs, outside the exported workspace: the host got the agent's file only.
      expect(Object.keys(await readTree(hostPath))).toEqual(["verified.json"]);
    },
  );

  it.skipIf(isolation === "bubblewrap" && !bubblewrapHere)(
    "R-RC-5 a small context stays inline, and the same document is also a read-only file among the inputs",
    async () => {
      const source = await createDestroyedSource(db.prisma(), place, home);
      const runId = await deliveredRun(source);
      await claimAndExecute(depsWith(createDefaultRegistry({ instanceRoot: home, localIsolation: isolation })), runId);
      expect((await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status, JSON.stringify(await events(runId))).toBe("succeeded");
      const found = JSON.parse(await readFile(path.join(await hostPathOf(source.issueId), "verified.json"), "utf8")) as Verified;
      const lease = await db.prisma().environmentLease.findFirstOrThrow({ where: { runId } });
      const file = path.join(home, "sandboxes", lease.providerLeaseId as string, "control", "inputs", "reconstruction.json");
      expect(found.delivery).toMatchObject({ inlined: true, reference: null, contextFile: file, fileMatches: true, outcomes: 1, fileWrite: isolation === "bubblewrap" ? "refused" : "not tried" });
      expect((await lstat(file)).mode & 0o777).toBe(0o400);
    },
  );
});

describe("a context too large to inline for a provider that cannot place files (R-RC-5)", () => {
  it("R-RC-5 the run is refused before its sandbox is acquired, with reconstruction_context_too_large, and the decision is withdrawn (never an E2BIG at agent start)", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const runId = await deliveredRun(source, LARGEST_INTENT);
    const registry = wrappedLocal("none", (local) => {
      const { placeInputs: _placeInputs, ...older } = local;
      return { ...older, capabilities: new Set(PROVIDER_CAPABILITIES.filter((c) => local.capabilities.has(c) && c !== "placeInputs")) };
    });
    await claimAndExecute(depsWith(registry), runId);
    const log = await events(runId);
    expect(await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } }), JSON.stringify(await codes(runId))).toMatchObject({ status: "failed", errorCode: "reconstruction_context_too_large" });
    expect(log.find((e) => e.code === "run.rejected")?.message).toMatch(/64 KiB/);
    expect(log.map((e) => e.code)).not.toContain("lease.acquired");
    expect(await db.prisma().environmentLease.count({ where: { runId } })).toBe(0);
    // The existing refusal path: the intent cancelled, its hold open again, nothing else opened.
    expect(await db.prisma().reconstructionIntent.findFirstOrThrow({ where: { recoveryActionId: source.actionId } })).toMatchObject({ status: "cancelled", deliveredRunId: runId });
    expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: source.actionId } })).toMatchObject({ status: "active" });
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId } })).toBe(0);
  });
});

describe("a saved source that no longer matches its intent (R-RC-5, R-FO-1)", () => {
  // The environment's lease policy for one test (the place's default is reuse_by_environment).
  async function withPolicy<T>(policy: "ephemeral" | "reuse_by_environment" | "retain_on_failure", body: () => Promise<T>): Promise<T> {
    const environment = await db.prisma().environment.findUniqueOrThrow({ where: { id: place.environmentId } });
    await db.prisma().environment.update({ where: { id: place.environmentId }, data: { defaultLeasePolicy: policy } });
    try {
      return await body();
    } finally {
      await db.prisma().environment.update({ where: { id: place.environmentId }, data: { defaultLeasePolicy: environment.defaultLeasePolicy } });
    }
  }

  async function tamperedRun(): Promise<{ source: DestroyedSource; runId: string; attachmentId: string; hostPath: string; before: Awaited<ReturnType<typeof readTree>> }> {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const runId = await deliveredRun(source);
    const attachment = await db.prisma().issueAttachment.findUniqueOrThrow({ where: { id: source.attachmentIds[0] } });
    const stored = path.join(home, attachment.storagePath);
    const original = await readFile(stored, "utf8");
    // Same size, other bytes: only the sha256 tells them apart.
    const tampered = original.replace("README", "READMF");
    expect(Buffer.byteLength(tampered)).toBe(Number(attachment.sizeBytes));
    const registry = wrappedLocal("none", (local) => ({
      ...local,
      async seedWorkspace(lease, archive) {
        await local.seedWorkspace!(lease, archive);
        await writeFile(stored, tampered);
      },
    }));
    const hostPath = await hostPathOf(source.issueId);
    const before = await readTree(hostPath);
    await claimAndExecute(depsWith(registry), runId);
    return { source, runId, attachmentId: attachment.id, hostPath, before };
  }

  it("R-RC-5 a stored attachment tampered after the handoff recheck (while the sandbox is seeded) refuses the run before its agent starts: nothing is placed and the host is unchanged", async () => {
    const { source, runId, attachmentId, hostPath, before } = await tamperedRun();
    const run = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    const log = await events(runId);
    expect(run, JSON.stringify(log)).toMatchObject({ status: "failed", errorCode: "attachment_changed" });
    expect(log.map((e) => e.code)).not.toContain("agent.started");
    expect(log.find((e) => e.code === "run.rejected")?.payload).toMatchObject({ code: "attachment_changed", attachmentId });
    // Nothing delivered, not even in part: the sandbox has no inputs; the host is as it was.
    const lease = await db.prisma().environmentLease.findFirstOrThrow({ where: { runId } });
    await expect(lstat(path.join(home, "sandboxes", lease.providerLeaseId as string, "control", "inputs"))).rejects.toMatchObject({ code: "ENOENT" });
    expect(await readTree(hostPath)).toEqual(before);
    // The decision is withdrawn as at the handoff: the intent cancelled, its hold open again.
    expect(await db.prisma().reconstructionIntent.findFirstOrThrow({ where: { recoveryActionId: source.actionId } })).toMatchObject({ status: "cancelled", deliveredRunId: runId });
    expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: source.actionId } })).toMatchObject({ status: "active" });
    // R-FO-1 covers a native provider failing before its result while the workspace may hold the
    // agent's unpublished edits. Here no agent process was ever started in the sandbox: it holds the
    // seed (the host's own files) and nothing else, so no file-recovery obligation is opened (the
    // reopened reconstruction hold is the task's one hold) and the lease follows its policy for a
    // run whose agent never started: this environment's reuse_by_environment stops and retains it.
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId } })).toBe(0);
    expect(log.map((e) => e.code)).not.toContain("run.files_retained");
    expect(await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: "released", leasePolicy: "reuse_by_environment" });
    expect(log.find((e) => e.code === "lease.released")?.payload).toMatchObject({ outcome: "agent_not_started", result: "stopped_and_retained" });
  });

  it("R-FO-1 an ephemeral sandbox whose reconstruction run was refused before its agent started is destroyed by the ordinary cleanup, with no obligation", async () => {
    const { source, runId } = await withPolicy("ephemeral", tamperedRun);
    const log = await events(runId);
    expect(await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } }), JSON.stringify(log)).toMatchObject({ status: "failed", errorCode: "attachment_changed" });
    expect(log.map((e) => e.code)).not.toContain("agent.started");
    const lease = await db.prisma().environmentLease.findFirstOrThrow({ where: { runId } });
    expect(lease).toMatchObject({ status: "destroyed", leasePolicy: "ephemeral" });
    await expect(lstat(path.join(home, "sandboxes", lease.providerLeaseId as string))).rejects.toMatchObject({ code: "ENOENT" });
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId } })).toBe(0);
    // The run's failure, the intent's cancellation and the reopened hold are as before.
    expect(await db.prisma().reconstructionIntent.findFirstOrThrow({ where: { recoveryActionId: source.actionId } })).toMatchObject({ status: "cancelled", deliveredRunId: runId });
    expect(await db.prisma().issueRecoveryAction.findMany({ where: { issueId: source.issueId, status: { in: ["active", "escalated"] } }, select: { id: true } })).toEqual([{ id: source.actionId }]);
  });
});

describe("a provider that cannot place files (R-RC-5)", () => {
  it("R-RC-5 keeps today's delivery: the agent is given each contentUrl and no path, and the context says so", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const runId = await deliveredRun(source);
    const registry = wrappedLocal("none", (local) => {
      const { placeInputs: _placeInputs, ...older } = local;
      return { ...older, capabilities: new Set(PROVIDER_CAPABILITIES.filter((c) => local.capabilities.has(c) && c !== "placeInputs")) };
    });
    await claimAndExecute(depsWith(registry), runId);
    expect((await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status, JSON.stringify(await events(runId))).toBe("succeeded");
    const found = JSON.parse(await readFile(path.join(await hostPathOf(source.issueId), "verified.json"), "utf8")) as { sources: { delivery: string; reason: string }; instructions: string; attachments: unknown[] };
    expect(found.sources).toMatchObject({ delivery: "contentUrl", reason: expect.stringContaining("builtin.local") });
    expect(found.instructions).toMatch(/Fetch each attachment from its contentUrl/);
    expect(found.attachments).toEqual([{ attachmentId: source.attachmentIds[0], path: null, contentUrl: `/api/issues/${source.issueId}/attachments/${source.attachmentIds[0]}/content`, verified: null }]);
    expect((await events(runId)).map((e) => e.code)).toContain("reconstruction.sources_by_url");
  });
});
