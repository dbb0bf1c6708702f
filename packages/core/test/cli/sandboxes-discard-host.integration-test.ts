// Issue 23 part 1 (host affinity): `copyback sandboxes discard` on an instance root of another
// host refuses a local sandbox of host A (exit 1, sandbox_on_other_host) and destroys nothing; the
// CLI's host is its instance root's host id. No requirement id exists: named by the issue's rule.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { HOST_ID_FILE } from "../../src/deployment/host-id";
import { EXIT } from "../../src/cli/exit-codes";
import { parseJson, removeTempDirs, runCli } from "./helpers";
import { createExportHold, exportHoldInstanceRoot, type ExportHold } from "../support/export-hold";

const db = useTestDatabase();
let hold: ExportHold;
let home = "";

beforeAll(async () => {
  const prisma = db.prisma();
  const company = await prisma.company.create({ data: { name: `Discard host ${randomUUID()}`, issuePrefix: "ACME" } });
  const environment = await prisma.environment.create({ data: { companyId: company.id, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment" } });
  const agent = await prisma.agent.create({ data: { companyId: company.id, name: "Builder", command: ["/bin/true"], environmentId: environment.id } });
  home = await exportHoldInstanceRoot();
  hold = await createExportHold(prisma, { companyId: company.id, agentId: agent.id, environmentId: environment.id }, home);
  await writeFile(path.join(home, HOST_ID_FILE), "host-b\n");
});
afterAll(async () => {
  await removeTempDirs();
  if (home) await rm(home, { recursive: true, force: true });
});

describe("copyback sandboxes discard across hosts", () => {
  it("host affinity: refuses another host's local sandbox (exit 1, sandbox_on_other_host), nothing destroyed; discards its own host's", async () => {
    const prisma = db.prisma();
    await prisma.environmentLease.update({ where: { id: hold.leaseId }, data: { hostId: "host-a" } });
    const argv = ["--json", "sandboxes", "discard", "--lease", hold.leaseId, "--allocation", hold.providerLeaseId, "--acknowledge", hold.actionId, "--reason", "copied by hand"];
    const refused = await runCli(argv, { databaseUrl: db.url(), copybackHome: home });
    expect(refused.code).toBe(EXIT.failed);
    expect((parseJson(refused) as unknown as { error: { code: string } }).error.code).toBe("sandbox_on_other_host");
    expect((await prisma.environmentLease.findUniqueOrThrow({ where: { id: hold.leaseId } })).status).not.toBe("destroyed");
    expect(existsSync(path.join(hold.instanceRoot, "sandboxes", hold.providerLeaseId))).toBe(true);

    await prisma.environmentLease.update({ where: { id: hold.leaseId }, data: { hostId: "host-b" } });
    expect((await runCli(argv, { databaseUrl: db.url(), copybackHome: home })).code).toBe(EXIT.ok);
    expect((await prisma.environmentLease.findUniqueOrThrow({ where: { id: hold.leaseId } })).status).toBe("destroyed");
  });
});
