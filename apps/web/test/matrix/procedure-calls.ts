// A valid call of every procedure for company A. State-changing calls get a fresh target per cell
// and say how to see whether they took effect: an allowed call must change its target, a refused
// one must leave it as it was. Allowed reads get a look at their answer, so an "allow" is never a
// call that merely did not throw.
import { expect } from "vitest";
import { restoredBody } from "../file-hold-fixture";
import { exportRetryReadmitted } from "../export-hold-fixture";
import { carriesReceipt } from "../recovery-fixture";
import { expectedOutcome, seesCompanyA } from "./expectations";
import { PRINCIPAL_MODELS } from "./principals";
import type { CellContext } from "./world";

export interface PreparedCall {
  input: unknown;
  /** State changes only: did the call change its target? */
  tookEffect?: () => Promise<boolean>;
  /** Allowed calls only: checks the answer is the company A data asked for. */
  checkResult?: (data: unknown) => void;
}

export interface ProcedureCall {
  prepare(ctx: CellContext): Promise<PreparedCall> | PreparedCall;
}

const companyOnly = (ctx: CellContext) => ({ companyId: ctx.world.companyId });
const ids = (rows: unknown): string[] => (rows as Array<{ id: string }>).map((row) => row.id);

export const PROCEDURE_CALLS: Readonly<Record<string, ProcedureCall>> = {
  "activity.list": {
    prepare: (ctx) => ({
      input: companyOnly(ctx),
      checkResult: (data) => expect(data).toHaveProperty("items"),
    }),
  },
  "agentKeys.list": {
    prepare: (ctx) => ({
      input: companyOnly(ctx),
      checkResult: (data) => expect(Array.isArray(data)).toBe(true),
    }),
  },
  "agentKeys.create": {
    prepare: ({ world, tag }) => {
      const name = `matrix ${tag}`;
      return {
        input: { companyId: world.companyId, agentId: world.auth.a.agent.id, name },
        tookEffect: async () => (await world.prisma.agentApiKey.count({ where: { name } })) === 1,
        checkResult: (data) => expect((data as { secret: string }).secret).toMatch(/^cba_/),
      };
    },
  },
  "agentKeys.revoke": {
    prepare: async ({ world }) => {
      const key = await world.fresh.agentKey();
      return {
        input: { companyId: world.companyId, keyId: key.id },
        tookEffect: async () =>
          (await world.prisma.agentApiKey.findUniqueOrThrow({ where: { id: key.id } }))
            .revokedAt !== null,
      };
    },
  },
  "agents.list": {
    prepare: (ctx) => ({
      input: companyOnly(ctx),
      checkResult: (data) => expect(ids(data)).toContain(ctx.world.auth.a.agent.id),
    }),
  },
  "agents.setEnvironment": {
    // A fresh agent without an environment per cell: an allowed call points it at company A's
    // environment, a refused one leaves it without.
    prepare: async ({ world, tag }) => {
      const agent = await world.prisma.agent.create({ data: { companyId: world.companyId, name: `matrix env ${tag}`, command: ["/bin/true"] } });
      const environmentId = world.auth.a.environment.id;
      return {
        input: { companyId: world.companyId, agentId: agent.id, environmentId },
        tookEffect: async () => (await world.prisma.agent.findUniqueOrThrow({ where: { id: agent.id } })).environmentId === environmentId,
        checkResult: (data) => expect(data).toMatchObject({ agent: { id: agent.id }, environment: { id: environmentId }, changed: true }),
      };
    },
  },
  "apiKeys.list": {
    prepare: (ctx) => ({
      input: companyOnly(ctx),
      checkResult: (data) => expect(Array.isArray(data)).toBe(true),
    }),
  },
  "apiKeys.create": {
    prepare: ({ world, principal, tag }) => {
      const name = `matrix ${tag}`;
      // The local board has no user of its own: it names the member whose role the key carries.
      const userId = principal === "local_board" ? { userId: world.auth.users.member.id } : {};
      return {
        input: { companyId: world.companyId, name, ...userId },
        tookEffect: async () => (await world.prisma.boardApiKey.count({ where: { name } })) === 1,
        checkResult: (data) => expect((data as { secret: string }).secret).toMatch(/^cbk_/),
      };
    },
  },
  "apiKeys.revoke": {
    prepare: async ({ world }) => {
      const key = await world.fresh.boardKey();
      return {
        input: { companyId: world.companyId, keyId: key.id },
        tookEffect: async () =>
          (await world.prisma.boardApiKey.findUniqueOrThrow({ where: { id: key.id } }))
            .revokedAt !== null,
      };
    },
  },
  "companies.list": {
    prepare: ({ world, principal }) => ({
      input: undefined,
      // Company lists show company A exactly to those with standing there (no suspended, roleless or outside members).
      checkResult: (data) =>
        expect(ids(data).includes(world.companyId)).toBe(seesCompanyA(PRINCIPAL_MODELS[principal])),
    }),
  },
  "companies.get": {
    prepare: (ctx) => ({
      input: companyOnly(ctx),
      checkResult: (data) => expect(data).toMatchObject({ id: ctx.world.companyId }),
    }),
  },
  "health.get": {
    prepare: () => ({
      input: undefined,
      checkResult: (data) => expect(data).toMatchObject({ status: "ok" }),
    }),
  },
  "issues.list": {
    prepare: (ctx) => ({
      input: companyOnly(ctx),
      checkResult: (data) =>
        expect(ids((data as { items: unknown }).items)).toContain(ctx.world.auth.a.issue.id),
    }),
  },
  "issues.get": {
    prepare: ({ world }) => ({
      input: { companyId: world.companyId, issueId: world.auth.a.issue.id },
      checkResult: (data) => expect(data).toMatchObject({ id: world.auth.a.issue.id }),
    }),
  },
  "issues.messages": {
    prepare: ({ world }) => ({
      input: { companyId: world.companyId, issueId: world.auth.a.issue.id },
      checkResult: (data) => expect(data).toHaveProperty("messages"),
    }),
  },
  "issues.attachments": {
    prepare: ({ world }) => ({
      input: { companyId: world.companyId, issueId: world.auth.a.issue.id },
      checkResult: (data) => expect(Array.isArray(data)).toBe(true),
    }),
  },
  "issues.addMessage": {
    prepare: ({ world, tag }) => {
      const body = `matrix ${tag}`;
      return {
        input: { companyId: world.companyId, issueId: world.auth.a.issue.id, body },
        tookEffect: async () => (await world.prisma.issueMessage.count({ where: { body } })) === 1,
      };
    },
  },
  "issues.updateStatus": {
    prepare: async ({ world }) => {
      const issue = await world.fresh.issue();
      return {
        input: {
          companyId: world.companyId,
          issueId: issue.id,
          status: "in_progress",
          expectedStatusVersion: 0,
        },
        tookEffect: async () =>
          (await world.prisma.issue.findUniqueOrThrow({ where: { id: issue.id } })).status ===
          "in_progress",
      };
    },
  },
  "issues.assignAgent": {
    prepare: async ({ world }) => {
      const issue = await world.fresh.issue();
      const agentId = world.auth.a.agent.id;
      return {
        input: { companyId: world.companyId, issueId: issue.id, agentId },
        tookEffect: async () =>
          (await world.prisma.issue.findUniqueOrThrow({ where: { id: issue.id } }))
            .assigneeAgentId === agentId,
        checkResult: (data) => expect(data).toMatchObject({ assignee: { id: agentId } }),
      };
    },
  },
  "issues.wake": {
    prepare: async ({ world }) => {
      const issue = await world.fresh.wakeableIssue();
      return {
        input: { companyId: world.companyId, issueId: issue.id },
        tookEffect: async () =>
          (await world.prisma.heartbeatRun.count({
            where: { nativeIssueId: issue.id, status: "queued" },
          })) === 1,
        checkResult: (data) => expect(data).toMatchObject({ created: true }),
      };
    },
  },
  "me.get": {
    prepare: ({ principal }) => ({
      input: undefined,
      checkResult: (data) => expect((data as { kind: string }).kind).toBe(meKindOf(principal)),
    }),
  },
  "members.list": {
    prepare: (ctx) => ({
      input: companyOnly(ctx),
      checkResult: (data) => expect(ids(data).length).toBeGreaterThan(0),
    }),
  },
  "members.updateRole": {
    prepare: async ({ world }) => {
      const membership = await world.fresh.membership();
      return {
        input: { companyId: world.companyId, membershipId: membership.id, role: "runtime_manager" },
        tookEffect: async () =>
          (await world.prisma.companyMembership.findUniqueOrThrow({ where: { id: membership.id } }))
            .role === "runtime_manager",
      };
    },
  },
  "members.setStatus": {
    prepare: async ({ world }) => {
      const membership = await world.fresh.membership();
      return {
        input: { companyId: world.companyId, membershipId: membership.id, status: "suspended" },
        tookEffect: async () =>
          (await world.prisma.companyMembership.findUniqueOrThrow({ where: { id: membership.id } }))
            .status === "suspended",
      };
    },
  },
  "recovery.forIssue": {
    // A fresh hold per cell: the layers of what the answer holds follow the caller's permissions.
    prepare: async ({ world, principal }) => {
      const hold = await world.fresh.ownerHold();
      const model = PRINCIPAL_MODELS[principal];
      const holds = (permission: "runtime:manage" | "runtime:confirm_owner_stop") =>
        expectedOutcome({ kind: "permission", permission }, model, world.mode).kind === "allow";
      return {
        input: { companyId: world.companyId, issueId: hold.issueId },
        checkResult: (data) => {
          const answer = data as {
            notice: { kind: string; actionId?: string };
            details: Array<{ actionId: string; operator: { ownerToken: string | null } | null }> | null;
          };
          expect(answer.notice).toMatchObject({ kind: "attention", actionId: hold.actionId });
          // R-UI-2: Recovery details only for runtime:manage; the token only for runtime:confirm_owner_stop.
          if (!holds("runtime:manage")) expect(answer.details).toBeNull();
          else
            expect(answer.details).toEqual([
              expect.objectContaining({
                actionId: hold.actionId,
                operator: holds("runtime:confirm_owner_stop")
                  ? expect.objectContaining({ ownerToken: hold.receipt.token })
                  : null,
              }),
            ]);
          // R-UI-1: never the recorded controller's host or process id, whoever asks.
          const text = JSON.stringify(data);
          expect(text).not.toContain(hold.receipt.host);
          expect(text).not.toMatch(new RegExp(`\\b${hold.receipt.pid}\\b`));
        },
      };
    },
  },
  "environments.list": {
    prepare: (ctx) => ({
      input: companyOnly(ctx),
      checkResult: (data) =>
        expect((data as { items: Array<{ id: string }> }).items.map((item) => item.id)).toContain(ctx.world.auth.a.environment.id),
    }),
  },
  "environments.create": {
    prepare: ({ world, tag }) => {
      const name = `matrix ${tag}`;
      return {
        input: { companyId: world.companyId, name, provider: "local", config: "{}" },
        tookEffect: async () => (await world.prisma.environment.count({ where: { companyId: world.companyId, name } })) === 1,
        checkResult: (data) => expect(data).toMatchObject({ name, provider: "local", pluginId: "builtin.local" }),
      };
    },
  },
  "sandboxes.listRetained": {
    prepare: (ctx) => ({
      input: companyOnly(ctx),
      checkResult: (data) =>
        expect((data as { items: Array<{ leaseId: string }> }).items.map((item) => item.leaseId)).toContain(ctx.world.auth.a.lease.id),
    }),
  },
  "sandboxes.discard": {
    // A fresh export-retry hold (a real stopped local sandbox) per cell: an allowed
    // discard destroys it, a refused one leaves the lease as it was.
    prepare: async ({ world }) => {
      const hold = await world.fresh.exportHold();
      return {
        input: { companyId: world.companyId, leaseId: hold.leaseId, providerLeaseId: hold.providerLeaseId, acknowledgedActionIds: [hold.actionId], reason: "The files were copied by hand." },
        tookEffect: async () => (await world.prisma.environmentLease.findUniqueOrThrow({ where: { id: hold.leaseId } })).status === "destroyed",
        checkResult: (data) => expect(data).toMatchObject({ leaseId: hold.leaseId, providerLeaseId: hold.providerLeaseId, actionIds: [hold.actionId] }),
      };
    },
  },
  "workspaces.pathHistory": {
    // A run without a prepared workspace: allowed principals get not_found for the workspace, so
    // the cell uses a run that has one (the export hold's, prepared as the finalizer leaves it).
    prepare: async ({ world }) => {
      const hold = await world.fresh.exportHold();
      return {
        input: { companyId: world.companyId, runId: hold.runId, path: "report.txt" },
        checkResult: (data) => expect(data).toMatchObject({ path: "report.txt", entries: [] }),
      };
    },
  },
  "recovery.listOpen": {
    prepare: (ctx) => ({
      input: companyOnly(ctx),
      checkResult: (data) =>
        expect(
          (data as { items: Array<{ actionId: string }> }).items.map((item) => item.actionId),
        ).toEqual(
          expect.arrayContaining([ctx.world.auth.a.olderHold.id, ctx.world.auth.a.newerIncident.id]),
        ),
    }),
  },
  "recovery.attestOwnerStop": {
    // A fresh hold per cell: an allowed attestation releases its receipt, a refused one keeps it.
    prepare: async ({ world }) => {
      const hold = await world.fresh.ownerHold();
      return {
        input: {
          companyId: world.companyId,
          issueId: hold.issueId,
          actionId: hold.actionId,
          runId: hold.runId,
          ownerToken: hold.receipt.token,
          controllerAndCopybackStopped: true,
          stopEvidence: "platform console: controller pod and copyback children terminated at 10:02",
        },
        tookEffect: async () => !(await carriesReceipt(world.prisma, hold.runId)),
        checkResult: (data) =>
          expect(data).toEqual({
            actionId: hold.actionId,
            runId: hold.runId,
            leaseIds: [hold.leaseId],
            status: "attested",
          }),
      };
    },
  },
  "recovery.resolve": {
    // R-RR-5: a fresh legacy repair hold per cell: an allowed resolution records it, a refused one leaves it open.
    prepare: async ({ world }) => {
      const hold = await world.fresh.fileHold();
      return {
        input: { companyId: world.companyId, issueId: hold.issueId, ...restoredBody(hold) },
        tookEffect: async () => (await world.prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: hold.actionId } })).status !== "active",
        checkResult: (data) =>
          expect(data).toEqual({ actionId: hold.actionId, runId: hold.runId, leaseIds: [hold.leaseId], outcome: "restored", status: "resolved" }),
      };
    },
  },
  "recovery.reconstructionOffer": {
    // R-UI-3, R-RC-1: the offer of a fresh discarded sandbox's hold.
    prepare: async ({ world }) => {
      const source = await world.fresh.destroyedSource();
      return {
        input: { companyId: world.companyId, issueId: source.issueId },
        checkResult: (data) => expect(data).toMatchObject({ actionId: source.actionId, sourceRunId: source.runId, leaseId: source.leaseId, pendingIntent: null }),
      };
    },
  },
  "recovery.reconstructWorkspace": {
    // R-RC-2, R-RC-3: a fresh discarded sandbox per cell: an allowed call records the intent, a refused one none.
    prepare: async ({ world, tag }) => {
      const source = await world.fresh.destroyedSource();
      return {
        input: {
          companyId: world.companyId,
          issueId: source.issueId,
          actionId: source.actionId,
          sourceRunId: source.runId,
          leaseId: source.leaseId,
          attachmentIds: source.attachmentIds,
          description: "Rebuild the work from the saved notes.",
          externalActionOutcomes: [{ action: "pushed a branch", outcome: "unknown" }],
          sourceStatusVersion: 2,
          requestId: `matrix ${tag}`,
        },
        tookEffect: async () => (await world.prisma.reconstructionIntent.count({ where: { recoveryActionId: source.actionId } })) === 1,
        checkResult: (data) => expect(data).toMatchObject({ kind: "recorded", intent: { actionId: source.actionId, status: "pending" } }),
      };
    },
  },
  "recovery.retryWorkspaceExport": {
    // R-EX-2: a fresh export-retry hold (a real stopped local sandbox) per cell: an allowed retry
    // re-admits its run, a refused one leaves it terminal.
    prepare: async ({ world }) => {
      const hold = await world.fresh.exportHold();
      return {
        input: { companyId: world.companyId, issueId: hold.issueId, actionId: hold.actionId, runId: hold.runId, repairNote: "Restored the transport; the files were kept." },
        tookEffect: () => exportRetryReadmitted(world.prisma, hold.runId),
        checkResult: (data) =>
          expect(data).toEqual({ actionId: hold.actionId, runId: hold.runId, leaseId: hold.leaseId, requestId: expect.any(String), status: "readmitted", retryState: "readmitted" }),
      };
    },
  },
  "runs.get": {
    prepare: ({ world }) => ({
      input: { companyId: world.companyId, runId: world.auth.a.run.id },
      checkResult: (data) => expect(data).toMatchObject({ id: world.auth.a.run.id }),
    }),
  },
  "runs.listForIssue": {
    prepare: ({ world }) => ({
      input: { companyId: world.companyId, issueId: world.auth.a.issue.id },
      checkResult: (data) =>
        expect(ids((data as { runs: unknown }).runs)).toContain(world.auth.a.run.id),
    }),
  },
  "runs.latestForIssue": {
    prepare: ({ world }) => ({
      input: { companyId: world.companyId, issueId: world.auth.a.issue.id },
      checkResult: (data) =>
        expect(data).toMatchObject({ run: { id: world.auth.a.run.id }, result: null }),
    }),
  },
  "runs.workspace": {
    prepare: ({ world }) => ({
      input: { companyId: world.companyId, runId: world.auth.a.run.id },
      checkResult: (data) => expect(data).toMatchObject({ workspace: null, changes: null }),
    }),
  },
  "runs.agentOutput": {
    prepare: ({ world }) => ({
      input: { companyId: world.companyId, runId: world.auth.a.run.id },
      checkResult: (data) => expect(data).toMatchObject({ lines: [], totalLines: 0, truncation: null }),
    }),
  },
  "runs.finalization": {
    prepare: ({ world }) => ({
      input: { companyId: world.companyId, runId: world.auth.a.run.id },
      checkResult: (data) => expect(data).toHaveProperty("workspaceOperations"),
    }),
  },
  // R-RC-7: a fresh running run per cell; an allowed Stop records its request, a refused one none.
  "runs.stop": {
    prepare: async ({ world }) => {
      const run = await world.fresh.runningRun();
      return {
        input: { companyId: world.companyId, runId: run.id },
        tookEffect: async () => {
          const row = await world.prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.id } });
          return typeof (row.runnerProfileJson as Record<string, unknown>).stopRequest === "object";
        },
        checkResult: (data) => expect(data).toMatchObject({ kind: "stop_requested", runId: run.id }),
      };
    },
  },
  // R-RR-7: a fresh failed run of a wakeable task per cell; an allowed Retry queues its successor.
  "runs.retry": {
    prepare: async ({ world }) => {
      const issue = await world.prisma.issue.findUniqueOrThrow({ where: { id: (await world.fresh.wakeableIssue()).id } });
      const failed = await world.prisma.heartbeatRun.create({
        data: { companyId: world.companyId, agentId: issue.assigneeAgentId as string, nativeIssueId: issue.id, status: "failed", runtimeMode: "native", errorCode: "agent_exit_nonzero", finishedAt: new Date() },
        select: { id: true },
      });
      return {
        input: { companyId: world.companyId, runId: failed.id },
        tookEffect: async () => (await world.prisma.heartbeatRun.count({ where: { predecessorRunId: failed.id, status: "queued" } })) === 1,
        checkResult: (data) => expect(data).toMatchObject({ created: true, predecessorRunId: failed.id }),
      };
    },
  },
};

function meKindOf(principal: CellContext["principal"]): string {
  const model = PRINCIPAL_MODELS[principal];
  switch (model.kind) {
    case "anonymous":
      return "anonymous";
    case "agent_of_a":
      return "agent";
    case "board_superuser":
      return principal === "local_board" ? "local_board" : "board_user";
    default:
      return "board_user";
  }
}
