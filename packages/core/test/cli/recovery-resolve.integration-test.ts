// `copyback recovery resolve` against a real PostgreSQL: a thin shell over resolveRecoveryAction
// (R-RR-5): the same body schema, the system actor, refusals as non-zero exits with their stable
// code, nothing written on a refusal or a malformed command line. The hold is a legacy repair hold
// written by core's own writers (retainLeaseOnFailure, openLegacyCopybackRepairAction).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { STOP_RECEIPT_SCHEMA } from "../../src/leases/lease-metadata";
import { retainLeaseOnFailure } from "../../src/leases/retained-source";
import { openLegacyCopybackRepairAction } from "../../src/records/actions";
import { parseJson, runCli } from "./helpers";

const db = useTestDatabase();
const cli = (argv: string[]) => runCli(argv, { databaseUrl: db.url() });

async function legacyHold() {
  const prisma = db.prisma();
  const company = await prisma.company.create({ data: { name: `CLI ${randomUUID()}`, issuePrefix: "CLI" } });
  const environment = await prisma.environment.create({ data: { companyId: company.id, name: "env", provider: "fake", pluginId: "builtin.fake" } });
  const agent = await prisma.agent.create({ data: { companyId: company.id, name: "legacy", command: ["/bin/true"], environmentId: environment.id, adapterConfig: { adapter: "legacy" } } });
  const issue = await prisma.issue.create({ data: { companyId: company.id, number: 1, identifier: "CLI-1", title: "t", status: "blocked", statusVersion: 3, assigneeAgentId: agent.id } });
  const run = await prisma.heartbeatRun.create({ data: { companyId: company.id, agentId: agent.id, nativeIssueId: issue.id, runtimeMode: "legacy", status: "failed" } });
  const providerLeaseId = `sbx-${randomUUID()}`;
  const lease = await prisma.environmentLease.create({
    data: {
      companyId: company.id, environmentId: environment.id, runId: run.id, issueId: issue.id, provider: "fake", pluginId: "builtin.fake", providerLeaseId,
      leasePolicy: "ephemeral", status: "released",
      metadata: { sandboxStopAndRetainReceipt: { schema: STOP_RECEIPT_SCHEMA, method: "builtin.stopLease", requestId: randomUUID(), pluginId: "builtin.fake", providerLeaseId, stoppedAt: new Date().toISOString() } },
    },
  });
  const actionId = await prisma.$transaction(async (tx) => {
    await retainLeaseOnFailure(tx, { leaseId: lease.id, expectRunId: run.id, reason: "legacy_copyback_failed" });
    return (await openLegacyCopybackRepairAction(tx, { companyId: company.id, issueId: issue.id, runId: run.id, leaseId: lease.id, providerLeaseId, pluginId: "builtin.fake", path: "copyback_failed", failureCode: "x", hostWritesStarted: false })).actionId;
  });
  return { issueId: issue.id, runId: run.id, leaseId: lease.id, actionId };
}

const args = (h: Awaited<ReturnType<typeof legacyHold>>, extra: string[] = []) => [
  "--json", "recovery", "resolve", "--action", h.actionId, "--source-status", "blocked", "--run", h.runId, "--lease", h.leaseId, "--run-status", "failed",
  "--stop-evidence", "provider console: stopped", "--recovered-files", "README.md restored", ...extra,
];

describe("copyback recovery resolve", () => {
  it("R-RR-5 records the repair through the one service with the system actor; the task is unchanged", async () => {
    const h = await legacyHold();
    const run = await cli(args(h));
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(parseJson(run)).toMatchObject({ ok: true, status: "resolved", actionId: h.actionId, runId: h.runId, leaseIds: [h.leaseId], actor: { type: "system", id: null } });
    const action = await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } });
    expect(action).toMatchObject({ status: "resolved", outcome: "restored", resolvedByType: "system" });
    expect(await db.prisma().issue.findUniqueOrThrow({ where: { id: h.issueId }, select: { status: true, statusVersion: true } })).toEqual({ status: "blocked", statusVersion: 3 });
  });

  it("R-RR-5 a changed status is refused with its code and a malformed command line writes nothing", async () => {
    const h = await legacyHold();
    const changed = await cli(args(h).map((a) => (a === "blocked" ? "in_review" : a)));
    expect(changed.code).not.toBe(EXIT.ok);
    expect(JSON.stringify(parseJson(changed))).toContain("source_status_changed");
    const malformed = await cli(["--json", "recovery", "resolve", "--action", h.actionId, "--source-status", "blocked", "--run", h.runId, "--run-status", "failed"]);
    expect(malformed.code).toBe(EXIT.usage);
    expect(JSON.stringify(parseJson(malformed))).toContain("invalid_request");
    expect((await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).status).toBe("active");
  });
});
