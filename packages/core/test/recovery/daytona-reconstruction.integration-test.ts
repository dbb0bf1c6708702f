// The reconstruction family on Daytona (R-RC-5): a destroyed source's reconstruction is delivered as
// a fresh run whose agent is on a Daytona environment (the real plugin, the emulator as its
// endpoint); it is claimed, rechecked right before the provider handoff, its saved sources placed in
// the sandbox outside the exported workspace (placeInputs), and the agent (node -e) reads each at
// the path it is told, verifies sha256 and size, and its own file alone reaches the host.
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { DirectoryMergeLocks } from "../../src/copyback/locks/index";
import { claimQueuedRuns } from "../../src/dispatch/claim-runs";
import { executeRun, type ExecuteRunDeps } from "../../src/dispatch/execute-run";
import { readProcessIdentity } from "../../src/process/read-process-identity";
import { createDaytonaProvider } from "../../src/providers/daytona/daytona-provider";
import { createLocalProvider, ProviderRegistry } from "../../src/providers/index";
import { reconstructWorkspace } from "../../src/recovery/operator/reconstruct-workspace";
import { deliverReconstruction } from "../../src/recovery/reconstruction/deliver-intent";
import { readTree, RESULT_IN_REVIEW } from "../dispatch/dispatch-fixture";
import { startDaytonaEmulator, type DaytonaEmulator } from "../support/daytona/emulator";
import { createDestroyedSource, reconstructionRequestFor } from "../support/destroyed-source";
import { createExportHoldPlace, exportHoldInstanceRoot, type ExportHoldPlace } from "../support/export-hold";

const KEY_VARIABLE = "DAYTONA_RECONSTRUCTION_TEST_KEY";
const db = useTestDatabase({ poolSize: 8 });
let home = "";
let place: ExportHoldPlace;
let emulator: DaytonaEmulator;
let deps: ExecuteRunDeps;
let daytonaEnvironmentId = "";

const AGENT = `
const fs = require("fs"), crypto = require("crypto");
const context = JSON.parse(process.env.COPYBACK_RECONSTRUCTION);
const attachments = context.attachments.map((a) => {
  if (!a.path) return { attachmentId: a.attachmentId, path: null, verified: null };
  const bytes = fs.readFileSync(a.path);
  return { attachmentId: a.attachmentId, path: a.path, verified: bytes.length === a.sizeBytes && crypto.createHash("sha256").update(bytes).digest("hex") === a.sha256, text: bytes.toString("utf8") };
});
fs.writeFileSync("verified.json", JSON.stringify({ sourceRunId: context.sourceRunId, sources: context.sources, attachments }));
fs.writeFileSync(process.env.COPYBACK_RESULT_FILE, ${JSON.stringify(RESULT_IN_REVIEW)});
`;

beforeAll(async () => {
  home = await exportHoldInstanceRoot();
  place = await createExportHoldPlace(db.prisma(), "Daytona reconstruction");
  emulator = await startDaytonaEmulator({ root: path.join(home, "daytona-emulator") });
  const registry = new ProviderRegistry();
  registry.register(createLocalProvider({ instanceRoot: home, isolation: "none" }));
  registry.register(createDaytonaProvider({ instanceRoot: home, variables: (name) => (name === KEY_VARIABLE ? emulator.apiKey : undefined), lifecycleTimeoutSec: 5, transferTimeoutSec: 30 }));
  const controller = await readProcessIdentity(process.pid);
  if (!controller) throw new Error("no /proc identity for the test process");
  deps = { db: db.prisma(), registry, instanceRoot: home, locks: new DirectoryMergeLocks({ instanceRoot: home }), databaseUrl: db.url(), controller, retry: { backoffMs: 0 } };
  const environment = await db.prisma().environment.create({
    data: { companyId: place.companyId, name: "daytona", provider: "daytona", pluginId: "builtin.daytona", defaultLeasePolicy: "ephemeral", config: { apiUrl: emulator.apiUrl, apiKeyEnv: KEY_VARIABLE } },
  });
  daytonaEnvironmentId = environment.id;
});
afterAll(async () => {
  await emulator?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

describe("a reconstruction's fresh session on Daytona (emulator)", { timeout: 120_000 }, () => {
  it("R-RC-5 the delivered run passes claim and handoff on Daytona, its saved source is placed in the sandbox outside the workspace and verified by the agent, and only the agent's own file is copied back", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    // The fresh session runs where the agent now is: a Daytona environment.
    await db.prisma().agent.update({ where: { id: place.agentId }, data: { environmentId: daytonaEnvironmentId, command: [process.execPath, "-e", AGENT], adapterConfig: { timeoutSeconds: 60 } } });
    const recorded = await reconstructWorkspace({ db: db.prisma(), instanceRoot: home }, await reconstructionRequestFor(db.prisma(), place.companyId, source, { requestId: `daytona-${source.actionId}` }));
    const outcome = await deliverReconstruction({ db: db.prisma(), instanceRoot: home }, recorded.intent.id);
    if (outcome.kind !== "delivered") throw new Error(`not delivered: ${JSON.stringify(outcome)}`);
    const runId = outcome.runId;
    const claimed = await claimQueuedRuns(db.prisma(), { limit: 10, controller: deps.controller, instanceRoot: home });
    const mine = claimed.find((c) => c.runId === runId);
    if (!mine) throw new Error(`run ${runId} was not claimed`);
    await executeRun(deps, mine, new AbortController().signal);

    const run = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    const log = await db.prisma().runEvent.findMany({ where: { runId }, select: { code: true, message: true }, orderBy: { createdAt: "asc" } });
    expect(run.status, JSON.stringify(log)).toBe("succeeded");
    const lease = await db.prisma().environmentLease.findFirstOrThrow({ where: { runId } });
    expect(lease).toMatchObject({ pluginId: "builtin.daytona", provider: "daytona" });
    expect(log.map((e) => e.code)).toContain("reconstruction.sources_placed");

    const hostPath = (await db.prisma().executionWorkspace.findFirstOrThrow({ where: { issues: { some: { id: source.issueId } } } })).hostPath;
    const found = JSON.parse(await readFile(path.join(hostPath, "verified.json"), "utf8")) as { sourceRunId: string; sources: { delivery: string; directory: string }; attachments: { attachmentId: string; path: string; verified: boolean; text: string }[] };
    const attachment = await db.prisma().issueAttachment.findUniqueOrThrow({ where: { id: source.attachmentIds[0] } });
    expect(found.sourceRunId).toBe(source.runId);
    expect(found.sources.delivery).toBe("sandbox");
    expect(found.attachments).toHaveLength(1);
    expect(found.attachments[0]).toMatchObject({ attachmentId: attachment.id, verified: true, text: await readFile(path.join(home, attachment.storagePath), "utf8") });
    expect(found.attachments[0]!.path.startsWith(found.sources.directory)).toBe(true);
    expect(found.attachments[0]!.path).not.toContain("copyback/workspace");
    // Outside the exported workspace: the host got the agent's file and none of the placed inputs.
    expect(Object.keys(await readTree(hostPath))).not.toContain("notes.md");
    expect(Object.keys(await readTree(hostPath))).toContain("verified.json");
    // Not a replay: the old run stays failed.
    expect(await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: source.runId } })).toMatchObject({ status: "failed" });
  });
});
