// `copyback recovery list|show|attest` against a real PostgreSQL (DATABASE_URL of this file's
// database), with holds opened the production way (finalizeRun on a foreign owner receipt). The
// attestation's admission is core's (attestOwnerStop); these tests prove the CLI is a thin shell
// over it: the same body schema, the system actor, refusals as non-zero exits with their stable
// code, and nothing written on any refusal or malformed command line.
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { finalizationLockKey } from "../../src/finalization/finalization-owner";
import { readFinalizationOwner } from "../../src/records/finalization-owner-receipt";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { COPYBACK_FAILED_CAUSE, OWNER_UNVERIFIED_CAUSE } from "../../src/records/causes";
import { buildWorld, preparedRun, writeTree, type World } from "../finalization/finalization-fixture";
import { selfIdentity } from "../recovery/recovery-fixture";
import { parseJson, runCli, spawnCli, type CliRun } from "./helpers";
import { attestationState, heldRun, writeReceipt, type HeldRun } from "./held-run";
import { recordHarnessCheck } from "../../src/records/actions/owner-unverified";

const db = useTestDatabase();
let world: World;

beforeAll(async () => {
  world = await buildWorld(db.prisma(), db.url());
});

afterAll(async () => {
  await world?.cleanup();
});

const cli = (argv: string[]) => runCli(argv, { databaseUrl: db.url() });

const attestArgs = (held: HeldRun, overrides: Record<string, string | null> = {}): string[] => {
  const flags: Record<string, string | null> = {
    "--action": held.actionId,
    "--run": held.runId,
    "--token": held.token,
    "--evidence": "kubectl get pod copyback-worker-7: NotFound; node drained at 09:12",
    "--controller-and-copyback-stopped": null,
    ...overrides,
  };
  const argv = ["recovery", "attest"];
  for (const [flag, value] of Object.entries(flags)) {
    if (value === "__omit__") continue;
    argv.push(flag);
    if (value !== null) argv.push(value);
  }
  return argv;
};

function errorOf(run: CliRun): { code: string; message: string } {
  return (parseJson(run) as { error: { code: string; message: string } }).error;
}

describe("copyback recovery list and show", () => {
  it("R-ORP-4: list shows an open unverified-owner hold with its company, task, run, cause, age and next action", async () => {
    const held = await heldRun(world);
    const issue = await db.prisma().issue.findUniqueOrThrow({ where: { id: held.issueId } });

    const text = await cli(["recovery", "list"]);
    expect(text.code).toBe(EXIT.ok);
    const line = text.stdout.split("\n").find((l) => l.includes(held.actionId));
    expect(line).toBeDefined();
    for (const part of [
      issue.identifier,
      held.runId,
      OWNER_UNVERIFIED_CAUSE,
      "An instance operator verifies",
    ])
      expect(line).toContain(part);
    expect(line).toMatch(/\s\d+[smhd]\s/);

    const json = parseJson(await cli(["--json", "recovery", "list"]));
    expect(json).toMatchObject({ ok: true, command: "recovery list", exitCode: 0 });
    const actions = json.actions as Record<string, unknown>[];
    expect(actions.find((a) => a.id === held.actionId)).toMatchObject({
      companyId: world.companyId,
      issueId: held.issueId,
      issueIdentifier: issue.identifier,
      runId: held.runId,
      cause: OWNER_UNVERIFIED_CAUSE,
      status: "active",
      attested: false,
      nextAction: expect.stringContaining("copyback recovery attest"),
      ageSeconds: expect.any(Number),
    });
  });

  it("R-ORP-4: list --company keeps to one company; a company with no holds lists none", async () => {
    const held = await heldRun(world);
    const mine = parseJson(await cli(["--json", "recovery", "list", "--company", world.companyId]));
    expect(
      (mine.actions as { id: string; companyId: string }[]).every(
        (a) => a.companyId === world.companyId,
      ),
    ).toBe(true);
    expect((mine.actions as { id: string }[]).map((a) => a.id)).toContain(held.actionId);

    const other = await db
      .prisma()
      .company.create({ data: { name: `Globex ${randomUUID()}`, issuePrefix: "GLX" } });
    const none = await cli(["recovery", "list", "--company", other.id]);
    expect(none.code).toBe(EXIT.ok);
    expect(none.stdout).toContain("no open recovery actions");
    expect(
      parseJson(await cli(["--json", "recovery", "list", "--company", other.id])),
    ).toMatchObject({ total: 0, actions: [] });
  });

  it("R-ATT-1: show prints the evidence, the owner token and the exact REST call (and the CLI call) prefilled", async () => {
    const held = await heldRun(world);
    const text = await cli(["recovery", "show", held.actionId]);
    expect(text.code).toBe(EXIT.ok);
    expect(text.stdout).toContain(`token ${held.token}`);
    expect(text.stdout).toContain("controller pid 4242 on controller-host-elsewhere");
    expect(text.stdout).toContain("the run still carries this owner's receipt");
    expect(text.stdout).toContain(
      `/api/issues/${held.issueId}/recovery-actions/resume-workspace-finalization`,
    );
    expect(text.stdout).toContain(`--action ${held.actionId} --run ${held.runId}`);

    const json = parseJson(await cli(["--json", "recovery", "show", held.actionId]));
    expect(json).toMatchObject({
      ok: true,
      ownerToken: held.token,
      action: {
        id: held.actionId,
        evidence: { runId: held.runId, ownerToken: held.token, reason: "controller_on_other_host" },
      },
      run: { status: "running", receipt: "held" },
      attestCall: {
        method: "POST",
        path: `/api/issues/${held.issueId}/recovery-actions/resume-workspace-finalization`,
        body: {
          actionId: held.actionId,
          runId: held.runId,
          ownerToken: held.token,
          controllerAndCopybackStopped: true,
        },
      },
    });
    // The curl line carries exactly that body.
    const curl = (json.attestCall as { curl: string; body: unknown }).curl;
    const sent = /-d '(.*)'$/.exec(curl)?.[1];
    expect(JSON.parse(sent ?? "null")).toEqual((json.attestCall as { body: unknown }).body);
  });

  it("R-RW-3: show of a hold the cloud harness could not take over prints the refusal's fixed code and reason", async () => {
    const held = await heldRun(world);
    expect(await recordHarnessCheck(db.prisma(), { actionId: held.actionId, code: "deployment_live", message: "The deployment is SUCCESS; its processes may still run." })).toBe(true);
    const text = await cli(["recovery", "show", held.actionId]);
    expect(text.stdout).toMatch(/harness {2}deployment_live \(.+\): The deployment is SUCCESS/);
    expect(parseJson(await cli(["--json", "recovery", "show", held.actionId]))).toMatchObject({ action: { evidence: { harnessCheck: { code: "deployment_live" } } } });
  });

  it("R-UI-2: show of a copyback-failed hold names the failure, whether host writes began, the conflicts, the lease and its stop receipt, and the resolution path (restored, or a disposition) prefilled", async () => {
    const name = `conflict-${randomUUID()}.txt`;
    await writeTree(world.hostPath, { [name]: "baseline" });
    const run = await preparedRun(world, "done");
    await writeFile(join(world.hostPath, name), "host version");
    await writeFile(join(run.sandbox, name), "sandbox version");
    expect(await finalizeRun(world.deps(), { runId: run.runId })).toMatchObject({ kind: "conflict" });
    const action = await db.prisma().issueRecoveryAction.findFirstOrThrow({ where: { runId: run.runId, cause: COPYBACK_FAILED_CAUSE } });
    const issue = await db.prisma().issue.findUniqueOrThrow({ where: { id: run.issueId } });

    const text = await cli(["recovery", "show", action.id]);
    expect(text.code).toBe(EXIT.ok);
    expect(text.stdout).toContain("  failure  merge_conflict (workspace_merge_conflict); host writes began: no");
    expect(text.stdout).toContain(`  conflicts 1: ${name} (both_changed)`);
    expect(text.stdout).toContain(`  lease    ${run.handle.leaseId}, allocation ${run.handle.providerLeaseId}`);
    expect(text.stdout).toMatch(/stop receipt: not confirmed yet/);
    const source = `--action ${action.id} --source-status ${issue.status} --run ${run.runId} --lease ${run.handle.leaseId} --run-status failed`;
    expect(text.stdout).toContain(`/api/issues/${run.issueId}/recovery-actions/resolve`);
    expect(text.stdout).toContain(source);
    expect(text.stdout).toContain("--outcome false_positive");

    const json = parseJson(await cli(["--json", "recovery", "show", action.id]));
    expect(json).toMatchObject({
      ok: true,
      copybackFailure: {
        failure: "merge_conflict",
        failureCode: "workspace_merge_conflict",
        hostWritesStarted: false,
        conflictCount: 1,
        conflicts: [{ path: name, kind: "both_changed" }],
        lease: { id: run.handle.leaseId, providerLeaseId: run.handle.providerLeaseId, stopPending: true },
        stoppedReceipt: null,
      },
      resolveCall: {
        method: "POST",
        path: `/api/issues/${run.issueId}/recovery-actions/resolve`,
        body: { actionId: action.id, outcome: "restored", sourceIssueStatus: issue.status, executionReconciliation: { runId: run.runId, leaseId: run.handle.leaseId, runStatus: "failed" } },
      },
    });
  });

  it("show of an unknown action exits 1 with not_found; a malformed id is a usage error (2)", async () => {
    const unknown = await cli(["--json", "recovery", "show", randomUUID()]);
    expect(unknown.code).toBe(EXIT.failed);
    expect(errorOf(unknown).code).toBe("not_found");
    const bad = await cli(["recovery", "show", "not-an-id"]);
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toContain("expected an id");
  });
});

describe("copyback recovery attest", () => {
  it("R-ATT-1: attest releases exactly the attested receipt, records the evidence with the system actor and one activity row, and changes nothing else", async () => {
    const held = await heldRun(world);
    const before = await attestationState(db.prisma(), held);
    const run = await cli(["--json", ...attestArgs(held)]);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(parseJson(run)).toMatchObject({
      ok: true,
      status: "attested",
      actionId: held.actionId,
      runId: held.runId,
      actor: { type: "system", id: null },
    });

    const after = await attestationState(db.prisma(), held);
    expect(readFinalizationOwner(after.run.runnerProfileJson)).toEqual({ kind: "none" });
    expect(after.run.status).toBe(before.run.status);
    expect(after.run.resultJson).toEqual(before.run.resultJson);
    expect(after.issue.status).toBe(before.issue.status);
    expect(after.coordinator).toEqual(before.coordinator);
    expect(after.leases).toEqual(before.leases);
    expect(after.results).toEqual(before.results);
    // The hold stays open until the copyback commits; it now records the attestation.
    expect(after.actions).toHaveLength(1);
    expect(after.actions[0]).toMatchObject({
      status: "active",
      evidence: {
        attestation: {
          ownerToken: held.token,
          owner: held.receipt,
          actor: { type: "system", id: null },
          stopEvidence: expect.stringContaining("NotFound"),
        },
      },
    });
    const activity = after.activity.slice(before.activity.length);
    expect(activity).toHaveLength(1);
    expect(activity[0]).toMatchObject({
      action: "recovery.owner_stop_attested",
      actorType: "system",
      actorId: null,
      entityId: held.actionId,
    });

    // list and show now say the saved work is being restored, and offer no second attestation.
    const shown = parseJson(await cli(["--json", "recovery", "show", held.actionId]));
    expect(shown).toMatchObject({
      action: { attested: true },
      run: { receipt: "released" },
      attestCall: null,
    });
    expect((await cli(["recovery", "list"])).stdout).toContain(
      "attested: the reconciler is restoring the saved work",
    );

    // The ordinary finalization (the reconciler's) then commits the same run and resolves the hold.
    expect((await finalizeRun(world.deps(), { runId: held.runId })).kind).toBe("committed");
    expect(
      await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: held.actionId } }),
    ).toMatchObject({ status: "resolved", resolvedByType: "system" });
    expect((await cli(["--json", "recovery", "list"])).stdout).not.toContain(held.actionId);
  });

  it("R-ATT-3: a repeated attestation is idempotent: exit 0, already_attested, nothing written", async () => {
    const held = await heldRun(world);
    expect((await cli(attestArgs(held))).code).toBe(EXIT.ok);
    const before = await attestationState(db.prisma(), held);
    const again = await cli(attestArgs(held));
    expect(again.code).toBe(EXIT.ok);
    expect(again.stdout).toContain("already attested");
    expect(parseJson(await cli(["--json", ...attestArgs(held)]))).toMatchObject({
      status: "already_attested",
    });
    expect(await attestationState(db.prisma(), held)).toEqual(before);
  });

  // Each refusal of the admission policy, reached through the CLI: exit 1, the stable code and
  // the message on stderr (and in --json), and not one row changed.
  const refusals: { code: string; name: string; arrange(held: HeldRun): Promise<string[]> }[] = [
    {
      code: "owner_changed",
      name: "a token that is not the hold's",
      arrange: async (held) => attestArgs(held, { "--token": "f".repeat(32) }),
    },
    {
      code: "owner_changed",
      name: "a newer owner's receipt on the run",
      arrange: async (held) => {
        await writeReceipt(db.prisma(), held.runId, { ...held.receipt, token: "n".repeat(32) });
        return attestArgs(held);
      },
    },
    {
      code: "run_mismatch",
      name: "another run's id",
      arrange: async (held) => {
        const other = await heldRun(world);
        return attestArgs(held, { "--run": other.runId });
      },
    },
    {
      code: "copyback_lock_active",
      name: "a copyback holding the run's finalization lock",
      arrange: async (held) => {
        const holder = new pg.Client({ connectionString: db.url() });
        await holder.connect();
        await holder.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [
          finalizationLockKey(world.companyId, held.runId),
        ]);
        lockHolders.push(holder);
        return attestArgs(held);
      },
    },
    {
      code: "controller_alive",
      name: "the recorded controller alive on this host",
      arrange: async (held) => {
        const self = await selfIdentity();
        await writeReceipt(db.prisma(), held.runId, {
          token: held.token,
          host: self.host,
          pid: self.pid,
          processStart: self.startTime,
          bootId: self.bootId,
        });
        return attestArgs(held);
      },
    },
    {
      code: "owner_receipt_malformed",
      name: "a malformed receipt on the run",
      arrange: async (held) => {
        await writeReceipt(db.prisma(), held.runId, { token: held.token });
        return attestArgs(held);
      },
    },
    {
      code: "action_not_open",
      name: "a resolved action",
      arrange: async (held) => {
        await db
          .prisma()
          .issueRecoveryAction.update({
            where: { id: held.actionId },
            data: { status: "resolved", resolvedAt: new Date(), resolvedByType: "system" },
          });
        return attestArgs(held);
      },
    },
    {
      code: "action_not_owner_unverified",
      name: "an action of another cause",
      arrange: async (held) => {
        const other = await db.prisma().issueRecoveryAction.create({
          data: {
            companyId: world.companyId,
            issueId: held.issueId,
            runId: held.runId,
            cause: "native_workspace_export_failed",
            fingerprint: randomUUID(),
            ownerType: "board",
          },
        });
        return attestArgs(held, { "--action": other.id });
      },
    },
    {
      code: "task_closed",
      name: "a task that is done",
      arrange: async (held) => {
        await db.prisma().issue.update({ where: { id: held.issueId }, data: { status: "done" } });
        return attestArgs(held);
      },
    },
    {
      code: "newer_run",
      name: "a newer run of the task",
      arrange: async (held) => {
        await db
          .prisma()
          .heartbeatRun.create({
            data: {
              companyId: world.companyId,
              agentId: world.agentId,
              nativeIssueId: held.issueId,
              status: "queued",
            },
          });
        return attestArgs(held);
      },
    },
    {
      code: "not_found",
      name: "an unknown action",
      arrange: async (held) => attestArgs(held, { "--action": randomUUID() }),
    },
  ];
  const lockHolders: pg.Client[] = [];
  afterAll(async () => {
    for (const holder of lockHolders.splice(0)) await holder.end();
  });

  for (const refusal of refusals) {
    it(`R-ATT-3: refused with ${refusal.code} (${refusal.name}): exit 1, the code and message printed, nothing written`, async () => {
      const held = await heldRun(world);
      const argv = await refusal.arrange(held);
      const before = await attestationState(db.prisma(), held);
      const text = await cli(argv);
      expect(text.code, text.stdout + text.stderr).toBe(EXIT.failed);
      expect(text.stderr).toMatch(new RegExp(`^copyback recovery attest: ${refusal.code}: \\S`));
      expect(text.stderr).not.toContain("unexpected error");
      const json = await cli(["--json", ...argv]);
      expect(json.code).toBe(EXIT.failed);
      expect(parseJson(json)).toMatchObject({
        ok: false,
        command: "recovery attest",
        exitCode: 1,
        error: { code: refusal.code },
      });
      expect(await attestationState(db.prisma(), held)).toEqual(before);
    });
  }

  it("R-ATT-1: without --controller-and-copyback-stopped, or without any other flag, it is a usage error (2) and nothing is written", async () => {
    const held = await heldRun(world);
    const before = await attestationState(db.prisma(), held);
    for (const flag of [
      "--controller-and-copyback-stopped",
      "--action",
      "--run",
      "--token",
      "--evidence",
    ]) {
      const run = await cli(attestArgs(held, { [flag]: "__omit__" }));
      expect(run.code, flag).toBe(EXIT.usage);
      expect(run.stderr, flag).toContain(`required option '${flag}`);
      expect(
        parseJson(await cli(["--json", ...attestArgs(held, { [flag]: "__omit__" })])),
        flag,
      ).toMatchObject({ ok: false, error: { code: "usage" } });
    }
    expect(await attestationState(db.prisma(), held)).toEqual(before);
  });

  it("R-ATT-1: malformed input (ids that are not UUIDs, an empty token or evidence) is refused as invalid_request (2) with every problem named, nothing written", async () => {
    const held = await heldRun(world);
    const before = await attestationState(db.prisma(), held);
    const cases: [Record<string, string>, string[]][] = [
      [{ "--action": "action-1" }, ["--action"]],
      [{ "--run": "12" }, ["--run"]],
      [{ "--token": "   " }, ["--token"]],
      [{ "--evidence": "" }, ["--evidence"]],
      [{ "--evidence": "x".repeat(20_001) }, ["--evidence"]],
      [{ "--action": "a", "--run": "b", "--evidence": " " }, ["--action", "--run", "--evidence"]],
    ];
    for (const [overrides, flags] of cases) {
      const run = await cli(["--json", ...attestArgs(held, overrides)]);
      expect(run.code, JSON.stringify(overrides)).toBe(EXIT.usage);
      const error = errorOf(run);
      expect(error.code).toBe("invalid_request");
      for (const flag of flags) expect(error.message).toContain(`${flag}:`);
      expect(error.message).toContain("nothing written");
    }
    expect(await attestationState(db.prisma(), held)).toEqual(before);
  });

  it("R-ATT-1: the real bin reads DATABASE_URL from its environment and attests (exit 0)", async () => {
    const held = await heldRun(world);
    const list = await spawnCli(["--json", "recovery", "list"], { DATABASE_URL: db.url() });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(held.actionId);
    const attested = await spawnCli(attestArgs(held), { DATABASE_URL: db.url() });
    expect(attested.code, attested.stderr).toBe(0);
    expect(attested.stdout).toMatch(/^attested: /);
    const refused = await spawnCli(attestArgs(held, { "--token": "z".repeat(32) }), {
      DATABASE_URL: db.url(),
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("owner_changed");
  });
});

describe("a malformed owner receipt's hold", () => {
  /** A held run whose receipt is then found malformed by finalization: the production writer opens its hold. */
  async function malformedHeld(): Promise<HeldRun> {
    const held = await heldRun(world);
    await writeReceipt(db.prisma(), held.runId, { token: 7, pid: "gone" });
    const outcome = await finalizeRun(world.deps(), { runId: held.runId });
    if (outcome.kind !== "owner_unverified") throw new Error(`expected a hold, got ${outcome.kind}`);
    return { ...held, actionId: outcome.actionId, token: "" };
  }

  it("R-ATT-1, R-ATT-3: show names the malformed receipt and prefills the attestation with its fixed reference; attest with it releases exactly that receipt (exit 0); a wrong reference exits 1 owner_changed and writes nothing", async () => {
    const held = await malformedHeld();
    const shown = parseJson(await cli(["--json", "recovery", "show", held.actionId]));
    const token = shown.ownerToken as string;
    expect(token).toMatch(/^malformed-receipt:sha256:[0-9a-f]{64}$/);
    expect(shown).toMatchObject({ run: { receipt: "held" }, attestCall: { body: { actionId: held.actionId, runId: held.runId, ownerToken: token } } });
    const text = await cli(["recovery", "show", held.actionId]);
    expect(text.stdout).toContain(`attest with the token ${token}`);

    const before = await attestationState(db.prisma(), held);
    const wrong = await cli(attestArgs(held, { "--token": `malformed-receipt:sha256:${"0".repeat(64)}` }));
    expect(wrong.code).toBe(EXIT.failed);
    expect(wrong.stderr).toMatch(/^copyback recovery attest: owner_changed: /);
    expect(await attestationState(db.prisma(), held)).toEqual(before);

    const attested = await cli(attestArgs(held, { "--token": token }));
    expect(attested.code, attested.stdout + attested.stderr).toBe(EXIT.ok);
    expect(attested.stdout).toContain(`attested: action ${held.actionId}`);
    const run = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: held.runId } });
    expect(readFinalizationOwner(run.runnerProfileJson)).toEqual({ kind: "none" });
  });
});
