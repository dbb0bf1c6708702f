// Issue 23 part 1 (host affinity): the export-only retry reads a retained sandbox and copies into
// the run's host workspace, so on another host it is refused (export_retry_on_other_host) before
// any provider call or write: for a local sandbox of another host, and for a workspace bound to
// another host. Real local provider and PostgreSQL. No requirement id: named by the issue's rule.
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { createDefaultRegistry } from "../../src/providers/index";
import { retryWorkspaceExport } from "../../src/recovery/operator/retry-workspace-export";
import { createExportHold, createExportHoldPlace, exportHoldInstanceRoot, type ExportHoldPlace } from "../support/export-hold";

const db = useTestDatabase();
let place: ExportHoldPlace;
let home = "";

beforeAll(async () => {
  place = await createExportHoldPlace(db.prisma(), "Export retry host");
  home = await exportHoldInstanceRoot();
});
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

const actor = { type: "local_board" as const, id: null };

describe("export-only retry host affinity (issue 23)", () => {
  it("host affinity: refused on another host (its local sandbox, or its workspace), nothing written", async () => {
    const hold = await createExportHold(db.prisma(), place, home);
    const input = { actionId: hold.actionId, runId: hold.runId, repairNote: "Restored the transport.", companyId: place.companyId, issueId: hold.issueId, actor };
    const deps = (hostId: string) => ({ db: db.prisma(), registry: createDefaultRegistry({ instanceRoot: home }), hostId });
    await db.prisma().environmentLease.update({ where: { id: hold.leaseId }, data: { hostId: "host-a" } });
    const before = {
      lease: await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: hold.leaseId } }),
      action: await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: hold.actionId } }),
    };
    await expect(retryWorkspaceExport(deps("host-b"), input)).rejects.toMatchObject({ code: "export_retry_on_other_host", message: expect.stringContaining("host-a") });

    await db.prisma().environmentLease.update({ where: { id: hold.leaseId }, data: { hostId: null } });
    const issue = await db.prisma().issue.findUniqueOrThrow({ where: { id: hold.issueId } });
    await db.prisma().executionWorkspace.update({ where: { id: issue.executionWorkspaceId! }, data: { hostId: "host-a" } });
    await expect(retryWorkspaceExport(deps("host-b"), input)).rejects.toMatchObject({ code: "export_retry_on_other_host" });
    expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: hold.actionId } })).toEqual(before.action);
    const lease = await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: hold.leaseId } });
    expect({ ...lease, hostId: "host-a", updatedAt: before.lease.updatedAt }).toEqual(before.lease);
  });
});
