// `copyback recovery show` of an exhausted-export hold (R-EX-2) against a real
// PostgreSQL and a real stopped local sandbox (export-hold.ts): the exact export-only retry, as
// the REST call and the CLI command, prefilled with the task, action and run; only while open.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { REPAIR_NOTE_PLACEHOLDER } from "../../src/recovery/operator/guidance";
import { parseJson, runCli } from "./helpers";
import { createExportHold, exportHoldInstanceRoot } from "../support/export-hold";

const db = useTestDatabase();
let home = "";
let place: { companyId: string; agentId: string; environmentId: string };

beforeAll(async () => {
  home = await exportHoldInstanceRoot();
  const prisma = db.prisma();
  const company = await prisma.company.create({ data: { name: `CLI show ${path.basename(home)}`, issuePrefix: "ACME" } });
  const environment = await prisma.environment.create({ data: { companyId: company.id, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment" } });
  const agent = await prisma.agent.create({ data: { companyId: company.id, name: "Builder", command: ["/bin/true"], environmentId: environment.id } });
  place = { companyId: company.id, agentId: agent.id, environmentId: environment.id };
});
afterAll(async () => {
  const { rm } = await import("node:fs/promises");
  if (home) await rm(home, { recursive: true, force: true });
});

const cli = (argv: string[]) => runCli(argv, { databaseUrl: db.url(), copybackHome: home });

describe("copyback recovery show of an exhausted-export hold", () => {
  it("R-EX-2 names the exact export-only retry (REST and CLI) for an open hold, and none once it is resolved", async () => {
    const h = await createExportHold(db.prisma(), place, home);
    const shown = await cli(["--json", "recovery", "show", h.actionId]);
    expect(shown.code, shown.stderr).toBe(EXIT.ok);
    const json = parseJson(shown) as { retryExportCall: { path: string; body: unknown; cli: string } | null; attestCall: unknown };
    expect(json.attestCall).toBeNull();
    expect(json.retryExportCall?.path).toBe(`/api/issues/${h.issueId}/recovery-actions/retry-workspace-export`);
    expect(json.retryExportCall?.body).toEqual({ actionId: h.actionId, runId: h.runId, repairNote: REPAIR_NOTE_PLACEHOLDER });
    expect(json.retryExportCall?.cli).toContain(`copyback recovery retry-export`);
    expect(json.retryExportCall?.cli).toContain(`--issue ${h.issueId} --action ${h.actionId} --run ${h.runId}`);

    const text = await cli(["recovery", "show", h.actionId]);
    expect(text.code, text.stderr).toBe(EXIT.ok);
    expect(text.stdout).toContain("export-only retry");
    expect(text.stdout).toContain(`/recovery-actions/retry-workspace-export`);
    expect(text.stdout).toContain(`--issue ${h.issueId} --action ${h.actionId} --run ${h.runId}`);

    await db.prisma().issueRecoveryAction.update({ where: { id: h.actionId }, data: { status: "resolved", resolvedByType: "system", outcome: "copyback_committed" } });
    const resolved = parseJson(await cli(["--json", "recovery", "show", h.actionId])) as { retryExportCall: unknown };
    expect(resolved.retryExportCall).toBeNull();
  });
});
