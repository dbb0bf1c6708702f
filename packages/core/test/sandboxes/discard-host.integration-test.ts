// Issue 23 part 1 (host affinity): Discard of a retained local sandbox acts only on its own host:
// another host's request is refused (sandbox_on_other_host) and changes nothing (no intent, no
// claim, the sandbox directory kept); the sandbox's own host discards it. Real local provider,
// real files, real PostgreSQL. No requirement id exists for this rule: named by the issue's rule.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { createDefaultRegistry } from "../../src/providers/index";
import { discardRetainedSandbox } from "../../src/sandboxes/discard-sandbox";
import { createExportHold, exportHoldInstanceRoot } from "../support/export-hold";

const db = useTestDatabase();
let place: { companyId: string; agentId: string; environmentId: string };
let home = "";

beforeAll(async () => {
  const prisma = db.prisma();
  const company = await prisma.company.create({ data: { name: `Discard host ${randomUUID()}`, issuePrefix: "ACME" } });
  const environment = await prisma.environment.create({ data: { companyId: company.id, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment" } });
  const agent = await prisma.agent.create({ data: { companyId: company.id, name: "Builder", command: ["/bin/true"], environmentId: environment.id } });
  place = { companyId: company.id, agentId: agent.id, environmentId: environment.id };
  home = await exportHoldInstanceRoot();
});
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

const actor = { type: "local_board" as const, id: null };
const REASON = "The report was copied by hand; the sandbox is no longer needed.";

describe("Discard host affinity (issue 23: nothing on host B deletes host A's files)", () => {
  it("host affinity: a Discard on another host is refused sandbox_on_other_host and changes nothing; its own host discards it", async () => {
    const hold = await createExportHold(db.prisma(), place, home);
    await db.prisma().environmentLease.update({ where: { id: hold.leaseId }, data: { hostId: "host-a" } });
    const before = await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: hold.leaseId } });
    const request = { companyId: place.companyId, leaseId: hold.leaseId, providerLeaseId: hold.providerLeaseId, acknowledgedActionIds: [hold.actionId], reason: REASON, actor };
    const registry = createDefaultRegistry({ instanceRoot: home });
    await expect(discardRetainedSandbox({ db: db.prisma(), registry, hostId: "host-b" }, request)).rejects.toMatchObject({
      code: "sandbox_on_other_host",
      message: expect.stringContaining("host-a"),
    });
    const after = await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: hold.leaseId } });
    expect(after).toEqual(before);
    expect(existsSync(path.join(hold.instanceRoot, "sandboxes", hold.providerLeaseId))).toBe(true);

    const result = await discardRetainedSandbox({ db: db.prisma(), registry, hostId: "host-a" }, request);
    expect(result.leaseId).toBe(hold.leaseId);
    expect((await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: hold.leaseId } })).status).toBe("destroyed");
  });
});
