// `copyback sandboxes list` against a real PostgreSQL (retained sandboxes):
// a real export-retry hold (a stopped local sandbox with its receipt and the board's hold) is
// listed with why it is retained, its run and task, provider, plugin, immutable allocation id and
// age; a committed run's released lease and a destroyed lease are not; --company scopes it.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { parseJson, removeTempDirs, runCli } from "./helpers";
import { createExportHold, exportHoldInstanceRoot, type ExportHold } from "../support/export-hold";

const db = useTestDatabase();
let place: { companyId: string; agentId: string; environmentId: string };
let hold: ExportHold;
let home = "";

beforeAll(async () => {
  const prisma = db.prisma();
  const company = await prisma.company.create({ data: { name: `Retained ${randomUUID()}`, issuePrefix: "ACME" } });
  const environment = await prisma.environment.create({ data: { companyId: company.id, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment" } });
  const agent = await prisma.agent.create({ data: { companyId: company.id, name: "Builder", command: ["/bin/true"], environmentId: environment.id } });
  place = { companyId: company.id, agentId: agent.id, environmentId: environment.id };
  home = await exportHoldInstanceRoot();
  hold = await createExportHold(prisma, place, home);
});
afterAll(async () => {
  await removeTempDirs();
  const { rm } = await import("node:fs/promises");
  if (home) await rm(home, { recursive: true, force: true });
});

const cli = (argv: string[]) => runCli(argv, { databaseUrl: db.url(), copybackHome: home });

interface Listed {
  total: number;
  sandboxes: { leaseId: string; runId: string; issueIdentifier: string; provider: string; pluginId: string; providerLeaseId: string; stopped: boolean; sizeBytes: number | null; ageSeconds: number; reasons: { kind: string; actionId?: string; cause?: string }[] }[];
}

describe("copyback sandboxes list", () => {
  it("lists a retained allocation with why, its run and task, provider, plugin, allocation id and age; nothing else", async () => {
    const prisma = db.prisma();
    // Not retained: a committed run's released lease, and a destroyed one.
    const run = await prisma.heartbeatRun.create({ data: { companyId: place.companyId, agentId: place.agentId, nativeIssueId: hold.issueId, status: "succeeded", runtimeMode: "native" } });
    await prisma.environmentLease.create({ data: { companyId: place.companyId, environmentId: place.environmentId, runId: run.id, issueId: hold.issueId, provider: "local", pluginId: "builtin.local", providerLeaseId: "released-one", leasePolicy: "ephemeral", status: "released" } });
    await prisma.environmentLease.create({ data: { companyId: place.companyId, environmentId: place.environmentId, runId: hold.runId, issueId: hold.issueId, provider: "local", pluginId: "builtin.local", providerLeaseId: "destroyed-one", leasePolicy: "ephemeral", status: "destroyed" } });

    const listed = await cli(["--json", "sandboxes", "list", "--company", place.companyId]);
    expect(listed.code).toBe(EXIT.ok);
    const body = parseJson(listed) as unknown as Listed;
    expect(body.total).toBe(1);
    const [sandbox] = body.sandboxes;
    expect(sandbox).toMatchObject({ leaseId: hold.leaseId, runId: hold.runId, provider: "local", pluginId: "builtin.local", providerLeaseId: hold.providerLeaseId, stopped: true, sizeBytes: null });
    expect(sandbox!.ageSeconds).toBeGreaterThanOrEqual(0);
    expect(sandbox!.reasons).toEqual(expect.arrayContaining([expect.objectContaining({ kind: "recovery_action", actionId: hold.actionId })]));
    const issue = await prisma.issue.findUniqueOrThrow({ where: { id: hold.issueId } });
    expect(sandbox!.issueIdentifier).toBe(issue.identifier);

    const text = await cli(["sandboxes", "list"]);
    expect(text.code).toBe(EXIT.ok);
    expect(text.stdout).toContain(hold.providerLeaseId);
    expect(text.stdout).toContain(hold.actionId);
    expect(text.stdout).not.toContain("released-one");
    expect(text.stdout).not.toContain("destroyed-one");
  });

  it("another company's list is empty, and a bad company id is a usage error", async () => {
    const other = await db.prisma().company.create({ data: { name: `Other ${randomUUID()}`, issuePrefix: "OTH" } });
    const empty = await cli(["--json", "sandboxes", "list", "--company", other.id]);
    expect(empty.code).toBe(EXIT.ok);
    expect((parseJson(empty) as unknown as Listed).total).toBe(0);
    const bad = await cli(["sandboxes", "list", "--company", "not-a-uuid"]);
    expect(bad.code).toBe(EXIT.usage);
  });
});

describe("copyback sandboxes discard", () => {
  it("refuses a wrong allocation id (exit 1, its code) and a missing reason (usage), then destroys the sandbox with every open action acknowledged", async () => {
    const prisma = db.prisma();
    const wrong = await cli(["--json", "sandboxes", "discard", "--lease", hold.leaseId, "--allocation", "not-this-one", "--acknowledge", hold.actionId, "--reason", "copied by hand"]);
    expect(wrong.code).toBe(EXIT.failed);
    expect((parseJson(wrong) as unknown as { error: { code: string } }).error.code).toBe("allocation_mismatch");
    const noReason = await cli(["sandboxes", "discard", "--lease", hold.leaseId, "--allocation", hold.providerLeaseId, "--reason", " "]);
    expect(noReason.code).toBe(EXIT.usage);
    expect((await prisma.environmentLease.findUniqueOrThrow({ where: { id: hold.leaseId } })).status).not.toBe("destroyed");

    const done = await cli(["sandboxes", "discard", "--lease", hold.leaseId, "--allocation", hold.providerLeaseId, "--acknowledge", hold.actionId, "--reason", "The report was copied to the host by hand."]);
    expect(done.code).toBe(EXIT.ok);
    expect(done.stdout).toContain(`allocation ${hold.providerLeaseId} destroyed through builtin.local`);
    const lease = await prisma.environmentLease.findUniqueOrThrow({ where: { id: hold.leaseId } });
    expect(lease.status).toBe("destroyed");
    expect((lease.metadata as Record<string, unknown>).sandboxDestructionReceipt).toMatchObject({ confirmed: true, by: { type: "system" } });
    expect((parseJson(await cli(["--json", "sandboxes", "list", "--company", place.companyId])) as unknown as Listed).total).toBe(0);
  });
});
