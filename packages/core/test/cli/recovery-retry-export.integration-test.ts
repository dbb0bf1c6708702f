// `copyback recovery retry-export` against a real PostgreSQL and a real local sandbox under the
// instance root (export-hold.ts): a thin shell over retryWorkspaceExport (R-EX-2, R-EX-3): the
// same body schema, the system actor, refusals as exit 1 with their stable code, and nothing
// written on a refusal or a malformed command line.
import { rename } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { createLocalProvider } from "../../src/providers/local/index";
import { parseJson, runCli } from "./helpers";
import { createExportHold, exportHoldInstanceRoot, type ExportHold } from "../support/export-hold";

const db = useTestDatabase();
let home = "";
let place: { companyId: string; agentId: string; environmentId: string };

beforeAll(async () => {
  home = await exportHoldInstanceRoot();
  const prisma = db.prisma();
  const company = await prisma.company.create({ data: { name: `CLI retry ${path.basename(home)}`, issuePrefix: "ACME" } });
  const environment = await prisma.environment.create({ data: { companyId: company.id, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment" } });
  const agent = await prisma.agent.create({ data: { companyId: company.id, name: "Builder", command: ["/bin/true"], environmentId: environment.id } });
  place = { companyId: company.id, agentId: agent.id, environmentId: environment.id };
});
afterAll(async () => {
  const { rm } = await import("node:fs/promises");
  if (home) await rm(home, { recursive: true, force: true });
});

const cli = (argv: string[]) => runCli(argv, { databaseUrl: db.url(), copybackHome: home });
const NOTE = "Restored the sandbox's network route; no file in the sandbox was touched.";
const args = (h: ExportHold, overrides: Partial<Record<"--issue" | "--action" | "--run" | "--note", string>> = {}) => {
  const flags = { "--issue": h.issueId, "--action": h.actionId, "--run": h.runId, "--note": NOTE, ...overrides };
  return ["--json", "recovery", "retry-export", ...Object.entries(flags).flat()];
};

async function state(h: ExportHold) {
  const prisma = db.prisma();
  return JSON.stringify({
    run: await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: h.runId } }),
    coordinator: await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId: h.runId } }),
    lease: await prisma.environmentLease.findUniqueOrThrow({ where: { id: h.leaseId } }),
    action: await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } }),
  });
}

describe("copyback recovery retry-export", () => {
  it("R-EX-2 re-admits the run through the one service: the retained sandbox resumed and verified, the system actor and the note recorded; a repeat writes nothing", async () => {
    const h = await createExportHold(db.prisma(), place, home);
    const first = await cli(args(h));
    expect(first.code, first.stderr).toBe(EXIT.ok);
    expect(parseJson(first)).toMatchObject({ actionId: h.actionId, runId: h.runId, leaseId: h.leaseId, status: "readmitted", actor: { type: "system", id: null } });
    expect(await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: h.runId } })).toMatchObject({ phase: "result_accepted" });
    const local = createLocalProvider({ instanceRoot: home, isolation: "none" });
    expect((await local.inspect!({ leaseId: h.leaseId, pluginId: "builtin.local", providerLeaseId: h.providerLeaseId })).state).toBe("running");
    expect((await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).evidence).toMatchObject({ exportRetry: { repairNote: NOTE, actor: { type: "system" } } });

    const before = await state(h);
    const repeat = await cli(args(h));
    expect(repeat.code).toBe(EXIT.ok);
    expect(parseJson(repeat)).toMatchObject({ status: "already_requested" });
    expect(await state(h)).toBe(before);
  });

  it("R-EX-3 a refusal exits 1 with its stable code and writes nothing; a malformed line exits 2; another task's action is not found", async () => {
    const h = await createExportHold(db.prisma(), place, home);
    const root = path.join(home, "sandboxes", h.providerLeaseId);
    await rename(root, `${root}.away`);
    const before = await state(h);
    const refused = await cli(args(h));
    expect(refused.code).toBe(EXIT.failed);
    expect((parseJson(refused) as { error: { code: string } }).error.code).toBe("sandbox_unavailable");
    expect(await state(h)).toBe(before);
    await rename(`${root}.away`, root);

    const blank = await cli(args(h, { "--note": "  " }));
    expect(blank.code).toBe(EXIT.usage);
    expect((parseJson(blank) as { error: { code: string } }).error.code).toBe("invalid_request");
    const elsewhere = await cli(args(h, { "--issue": "00000000-0000-4000-8000-000000000000" }));
    expect(elsewhere.code).toBe(EXIT.failed);
    expect(await state(h)).toBe(before);
  });
});
