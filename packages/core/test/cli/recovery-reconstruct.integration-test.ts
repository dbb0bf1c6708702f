// `copyback recovery reconstruct` against a real PostgreSQL, a real discarded local sandbox and a
// real attachment store under the instance root (testing/destroyed-source.ts): a thin shell over
// reconstructWorkspace (R-RC-2, R-RC-3): the same body schema, the system actor, refusals as exit 1
// with their stable code, and nothing written on a refusal or a malformed command line.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { deliverReconstruction } from "../../src/recovery/reconstruction/deliver-intent";
import { deferralMessage } from "../../src/recovery/task-notice";
import { createDestroyedSource, createRetainedSource, type DestroyedSource } from "../support/destroyed-source";
import { createExportHoldPlace, exportHoldInstanceRoot } from "../support/export-hold";
import { parseJson, runCli } from "./helpers";

const db = useTestDatabase();
let home = "";
let place: { companyId: string; agentId: string; environmentId: string };

beforeAll(async () => {
  home = await exportHoldInstanceRoot();
  place = await createExportHoldPlace(db.prisma(), "CLI reconstruct");
});
afterAll(async () => {
  const { rm } = await import("node:fs/promises");
  if (home) await rm(home, { recursive: true, force: true });
});

const cli = (argv: string[]) => runCli(argv, { databaseUrl: db.url(), copybackHome: home });
const args = (s: DestroyedSource, overrides: Record<string, string> = {}) => {
  const flags = { "--issue": s.issueId, "--action": s.actionId, "--run": s.runId, "--lease": s.leaseId, "--description": "Rebuild the README changes", "--status-version": "2", "--request-id": `cli-${s.actionId}`, ...overrides };
  return ["--json", "recovery", "reconstruct", ...Object.entries(flags).flat(), ...s.attachmentIds.flatMap((id) => ["--attachment", id]), "--outcome", "not_performed=opened a pull request"];
};
const intents = (s: DestroyedSource) => db.prisma().reconstructionIntent.count({ where: { recoveryActionId: s.actionId } });

describe("copyback recovery reconstruct", () => {
  it("R-RC-2 R-RC-3 records the intent through the one service as the system actor; a repeat adopts it and writes nothing", async () => {
    const s = await createDestroyedSource(db.prisma(), place, home);
    const first = await cli(args(s));
    expect(first.code, first.stderr).toBe(EXIT.ok);
    expect(parseJson(first)).toMatchObject({ kind: "recorded", intent: { actionId: s.actionId, sourceRunId: s.runId, leaseId: s.leaseId, status: "pending", attachmentHashes: [{ attachmentId: s.attachmentIds[0] }] }, actor: { type: "system", id: null } });
    const row = await db.prisma().reconstructionIntent.findUniqueOrThrow({ where: { recoveryActionId: s.actionId } });
    expect(row.externalActionOutcomes).toMatchObject({ observed: [{ action: "opened a pull request", outcome: "not_performed" }] });
    const repeat = await cli(args(s));
    expect(repeat.code).toBe(EXIT.ok);
    expect(parseJson(repeat)).toMatchObject({ kind: "adopted", intent: { id: row.id } });
    expect(await intents(s)).toBe(1);
  });

  it("R-RC-3 R-RC-5 a repeat shows why the recorded intent's delivery waits (its deferral: code, since when, the sentence)", async () => {
    const s = await createDestroyedSource(db.prisma(), place, home);
    expect((await cli(args(s))).code).toBe(EXIT.ok);
    const row = await db.prisma().reconstructionIntent.findUniqueOrThrow({ where: { recoveryActionId: s.actionId } });
    // A run older than the source holds the task's checkout: the delivery is deferred (execution_owner).
    const owner = await db.prisma().heartbeatRun.create({ data: { companyId: place.companyId, agentId: place.agentId, nativeIssueId: s.issueId, status: "running", createdAt: new Date(0) } });
    await db.prisma().issue.update({ where: { id: s.issueId }, data: { checkoutRunId: owner.id } });
    const since = new Date("2026-12-02T01:00:00.000Z");
    expect(await deliverReconstruction({ db: db.prisma(), instanceRoot: home, now: () => since }, row.id)).toMatchObject({ kind: "refused", code: "execution_owner" });
    const json = await cli(args(s));
    expect(parseJson(json)).toMatchObject({ kind: "adopted", intent: { id: row.id, deferral: { code: "execution_owner", message: deferralMessage("execution_owner"), since: since.toISOString(), lastSeenAt: since.toISOString() } } });
    const text = await cli(args(s).filter((arg) => arg !== "--json"));
    expect(text.code, text.stderr).toBe(EXIT.ok);
    expect(text.stdout).toContain(`waiting  execution_owner since ${since.toISOString()}`);
    expect(text.stdout).toContain(deferralMessage("execution_owner"));

    // `copyback recovery show` of the hold shows the same decision and why it waits.
    const show = await cli(["recovery", "show", s.actionId]);
    expect(show.code, show.stderr).toBe(EXIT.ok);
    expect(show.stdout).toContain(`continue from saved sources: intent ${row.id}`);
    expect(show.stdout).toContain("pending: the reconciler delivers it as a fresh run");
    expect(show.stdout).toContain(`${deferralMessage("execution_owner")} (execution_owner, since ${since.toISOString()}`);
    const showJson = await cli(["--json", "recovery", "show", s.actionId]);
    expect(parseJson(showJson)).toMatchObject({ reconstruction: { id: row.id, status: "pending", deferral: { code: "execution_owner" } } });
  });

  it("R-RC-3 copyback recovery show of a hold without a decision shows none", async () => {
    const s = await createDestroyedSource(db.prisma(), place, home);
    const show = await cli(["--json", "recovery", "show", s.actionId]);
    expect(show.code, show.stderr).toBe(EXIT.ok);
    expect(parseJson(show)).toMatchObject({ reconstruction: null });
    expect((await cli(["recovery", "show", s.actionId])).stdout).not.toContain("continue from saved sources");
  });

  it("R-RC-1 a retained sandbox exits 1 with source_not_destroyed; a malformed line exits 2; another task's action is not found: nothing written", async () => {
    const s = await createRetainedSource(db.prisma(), place, home);
    const refused = await cli(args(s));
    expect(refused.code).toBe(EXIT.failed);
    expect((parseJson(refused) as { error: { code: string } }).error.code).toBe("source_not_destroyed");
    const blank = await cli(args(s, { "--description": "  " }));
    expect(blank.code).toBe(EXIT.usage);
    expect((parseJson(blank) as { error: { code: string } }).error.code).toBe("invalid_request");
    const badOutcome = await cli([...args(s), "--outcome", "maybe=sent an email"]);
    expect(badOutcome.code).toBe(EXIT.usage);
    const elsewhere = await cli(args(s, { "--issue": "00000000-0000-4000-8000-000000000000" }));
    expect(elsewhere.code).toBe(EXIT.failed);
    expect(await intents(s)).toBe(0);
  });
});
