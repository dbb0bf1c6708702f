// The task notice of a hold answered by "Continue from saved sources" (R-RC-3, R-RC-5, R-UI-1,
// R-UI-2), read as the console reads it (holds.ts noticeActionsOf, core's deriveTaskNotice) on a
// real PostgreSQL with real files: the discarded export hold of a real run, the intent recorded
// by the real service, delivered or refused by the real delivery and claim.
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { listOpenActionsForIssue, noticeActionsOf, openActionsByIssue } from "../../src/recovery/holds";
import { reconstructWorkspace } from "../../src/recovery/operator/reconstruct-workspace";
import { deliverReconstruction } from "../../src/recovery/reconstruction/deliver-intent";
import { CONTINUING_MESSAGE, FILES_GIVEN_UP_MESSAGE, RECONSTRUCTION_STOPPED_PREFIX, deriveTaskNotice, type TaskNotice } from "../../src/recovery/task-notice";
import { claimQueuedRuns } from "../../src/dispatch/claim-runs";
import { createDestroyedSource, reconstructionRequestFor, type DestroyedSource } from "../support/destroyed-source";
import { createExportHoldPlace, exportHoldInstanceRoot } from "../support/export-hold";
import { CONTROLLER } from "../runs/runs-fixture";

const db = useTestDatabase();
let place: { companyId: string; agentId: string; environmentId: string };
let home = "";

beforeAll(async () => {
  place = await createExportHoldPlace(db.prisma(), "Notice");
  home = await exportHoldInstanceRoot();
});
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

const deps = () => ({ db: db.prisma(), instanceRoot: home });

const request = (source: DestroyedSource) => reconstructionRequestFor(db.prisma(), place.companyId, source);

/** The task page's notice, as recovery.forIssue derives it. */
async function notice(source: DestroyedSource): Promise<TaskNotice> {
  const rows = await listOpenActionsForIssue(db.prisma(), place.companyId, source.issueId);
  return deriveTaskNotice(await noticeActionsOf(db.prisma(), place.companyId, rows));
}

/** The board's chip, as issues.list derives it. */
async function chip(source: DestroyedSource): Promise<TaskNotice> {
  const byIssue = await openActionsByIssue(db.prisma(), place.companyId, [source.issueId]);
  return deriveTaskNotice(byIssue.get(source.issueId) ?? []);
}

const text = (n: TaskNotice) => (n.kind === "none" ? "" : n.message);

describe("the task notice of a reconstruction", () => {
  it("R-RC-3 R-UI-1 R-RC-5: before the decision it needs an operator, once recorded it is continuing (page and chip), once delivered normal work", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    expect(await notice(source)).toMatchObject({ kind: "attention", actionId: source.actionId, message: FILES_GIVEN_UP_MESSAGE });
    const recorded = await reconstructWorkspace(deps(), await request(source));
    expect(await notice(source)).toEqual({ kind: "restoring", runId: source.runId, message: CONTINUING_MESSAGE });
    expect(await chip(source)).toMatchObject({ kind: "restoring", message: CONTINUING_MESSAGE });
    expect(await deliverReconstruction(deps(), recorded.intent.id)).toMatchObject({ kind: "delivered" });
    expect(await notice(source)).toEqual({ kind: "none" });
    expect(await chip(source)).toEqual({ kind: "none" });
  });

  it("R-RC-5 R-UI-2: a delivery refused by a later human block shows the attention notice again with that reason; a fresh decision is continuing again", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const recorded = await reconstructWorkspace(deps(), await request(source));
    await db.prisma().activityLog.create({ data: { companyId: place.companyId, actorType: "user", actorId: null, action: "issue.status_changed", entityType: "issue", entityId: source.issueId, details: { from: "blocked", to: "blocked" } } });
    expect(await deliverReconstruction(deps(), recorded.intent.id)).toMatchObject({ kind: "refused", code: "human_block" });
    const refused = await notice(source);
    expect(refused).toMatchObject({ kind: "attention", actionId: source.actionId });
    expect(text(refused).startsWith(RECONSTRUCTION_STOPPED_PREFIX)).toBe(true);
    expect(text(refused)).toMatch(/person blocked or reassigned/);
    expect(text(refused)).not.toMatch(/human_block|[0-9a-f]{8}-/);
    expect(await chip(source)).toMatchObject({ kind: "attention" });
    await reconstructWorkspace(deps(), await request(source));
    expect(await notice(source)).toMatchObject({ kind: "restoring", message: CONTINUING_MESSAGE });
  });

  it("R-RC-5 R-UI-2: a run withdrawn at claim (a changed attachment) reopens the hold: the notice asks for the saved sources again", async () => {
    const source = await createDestroyedSource(db.prisma(), place, home);
    const recorded = await reconstructWorkspace(deps(), await request(source));
    expect(await deliverReconstruction(deps(), recorded.intent.id)).toMatchObject({ kind: "delivered" });
    expect(await notice(source)).toEqual({ kind: "none" });
    const row = await db.prisma().issueAttachment.findUniqueOrThrow({ where: { id: source.attachmentIds[0] } });
    await writeFile(path.join(home, row.storagePath), "changed after the decision\n");
    await claimQueuedRuns(db.prisma(), { limit: 10, controller: CONTROLLER, instanceRoot: home });
    const withdrawn = await notice(source);
    expect(withdrawn).toMatchObject({ kind: "attention", actionId: source.actionId });
    expect(text(withdrawn)).toMatch(/choose the saved sources again/);
  });
});
