// A valid request to every route.ts handler for company A's issue, run and lease, and what an
// authorized request answers: 200 (201 when it creates a record, 202 when accepted for later;
// 501 `not_implemented` would be a stub: none is left). The finish
// route gets a fresh running run per cell, the attestation a fresh unverified-owner hold.
import { expect } from "vitest";
import { PASSWORD } from "../auth-fixture";
import { restoredBody } from "../file-hold-fixture";
import { storeAttachment } from "@copyback/core/board";
import { exportHoldInstanceRoot, exportRetryReadmitted } from "../export-hold-fixture";
import { carriesReceipt } from "../recovery-fixture";
import { credentialOf, freshClientAddress, type CellContext } from "./world";
import { originFor, type MatrixRequest } from "./http";

export interface PreparedRequest {
  request: MatrixRequest;
  /** The dynamic segments Next.js would pass (`[id]` -> { id }). */
  params: Record<string, string | string[]>;
  /** Releases what an allowed response holds open (the live stream). */
  cleanup?: (response: Response) => Promise<void>;
  /** State changes only: did the request change its target? (allowed: it must; refused: it must not) */
  tookEffect?: () => Promise<boolean>;
}

export interface RouteCall {
  /** The status of an authorized, valid request. */
  allowedStatus: 200 | 201 | 202 | 303 | 501;
  prepare(ctx: CellContext): Promise<PreparedRequest> | PreparedRequest;
  /** Allowed requests only: checks the answer beyond its status. */
  checkAllowed?: (response: Response, ctx: CellContext) => Promise<void>;
}

const json = async (response: Response) => (await response.json()) as Record<string, unknown>;

export const ROUTE_CALLS: Readonly<Record<string, RouteCall>> = {
  "GET /api/auth/:all": {
    allowedStatus: 200,
    prepare: () => ({
      params: { all: ["get-session"] },
      request: { method: "GET", path: "/api/auth/get-session" },
    }),
  },
  "POST /api/auth/:all": {
    allowedStatus: 200,
    // Signing in does not depend on who asks: a fresh user, from a fresh client address, signs in.
    prepare: async (ctx) => {
      const { email } = await ctx.world.fresh.signInUser();
      const origin = originFor(ctx.world.mode, credentialOf(ctx.world, ctx.principal));
      return {
        params: { all: ["sign-in", "email"] },
        request: {
          method: "POST",
          path: "/api/auth/sign-in/email",
          body: { email, password: PASSWORD },
          headers: {
            origin,
            "sec-fetch-site": "same-origin",
            "x-forwarded-for": freshClientAddress(),
          },
        },
      };
    },
    checkAllowed: async (response) =>
      expect(response.headers.getSetCookie().some((c) => c.startsWith("copyback."))).toBe(true),
  },
  "GET /api/environment-leases/:leaseId": {
    allowedStatus: 200,
    prepare: ({ world }) => ({
      params: { leaseId: world.auth.a.lease.id },
      request: { method: "GET", path: `/api/environment-leases/${world.auth.a.lease.id}` },
    }),
    checkAllowed: async (response, { world }) =>
      expect(await json(response)).toMatchObject({ lease: { id: world.auth.a.lease.id } }),
  },
  "GET /api/events": {
    allowedStatus: 200,
    prepare: ({ world }) => {
      const controller = new AbortController();
      return {
        params: {},
        request: {
          method: "GET",
          path: `/api/events?companyId=${world.companyId}`,
          signal: controller.signal,
        },
        cleanup: async (response) => {
          controller.abort();
          await response.body?.cancel().catch(() => undefined);
        },
      };
    },
    checkAllowed: async (response) =>
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/),
  },
  "GET /api/health": {
    allowedStatus: 200,
    prepare: () => ({ params: {}, request: { method: "GET", path: "/api/health" } }),
    checkAllowed: async (response) => expect(await json(response)).toMatchObject({ status: "ok" }),
  },
  "GET /api/livez": {
    allowedStatus: 200,
    prepare: () => ({ params: {}, request: { method: "GET", path: "/api/livez" } }),
    checkAllowed: async (response) => expect(await json(response)).toMatchObject({ status: "ok" }),
  },
  "GET /api/metrics": {
    allowedStatus: 200,
    prepare: () => ({ params: {}, request: { method: "GET", path: "/api/metrics" } }),
    checkAllowed: async (response) => expect(await response.text()).toContain("copyback_database_up 1"),
  },
  "GET /api/readyz": {
    allowedStatus: 200,
    prepare: () => ({ params: {}, request: { method: "GET", path: "/api/readyz" } }),
    checkAllowed: async (response) => expect(await json(response)).toMatchObject({ status: "ready", database: { reachable: true } }),
  },
  "GET /api/local-sign-in": {
    allowedStatus: 303,
    // A token that is not the instance's secret: nobody is signed in by it, whoever sends it.
    prepare: () => ({
      params: {},
      request: { method: "GET", path: "/api/local-sign-in?token=not-the-console-secret-0123456789abcdefghij" },
    }),
  },
  "GET /api/issues/:id/recovery-actions": {
    allowedStatus: 200,
    prepare: ({ world }) => ({
      params: { id: world.auth.a.issue.id },
      request: { method: "GET", path: `/api/issues/${world.auth.a.issue.id}/recovery-actions` },
    }),
    checkAllowed: async (response, { world }) => {
      const body = await json(response);
      expect((body.actions as Array<{ id: string }>).map((a) => a.id).sort()).toEqual(
        [world.auth.a.olderHold.id, world.auth.a.newerIncident.id].sort(),
      );
    },
  },
  "GET /api/issues/:id/attachments": {
    allowedStatus: 200,
    prepare: ({ world }) => ({
      params: { id: world.auth.a.issue.id },
      request: { method: "GET", path: `/api/issues/${world.auth.a.issue.id}/attachments` },
    }),
    checkAllowed: async (response) => expect(Array.isArray((await json(response)).attachments)).toBe(true),
  },
  "POST /api/issues/:id/attachments": {
    allowedStatus: 201,
    // A fresh task per cell: an allowed upload stores one attachment, a refused one none.
    prepare: async ({ world }) => {
      await exportHoldInstanceRoot();
      const issue = await world.fresh.issue();
      return {
        params: { id: issue.id },
        request: {
          method: "POST",
          path: `/api/issues/${issue.id}/attachments`,
          body: { note: "saved notes" },
          headers: { "x-file-name": "notes.json" },
        },
        tookEffect: async () => (await world.prisma.issueAttachment.count({ where: { issueId: issue.id } })) === 1,
      };
    },
    checkAllowed: async (response) =>
      expect(await json(response)).toMatchObject({ fileName: "notes.json", contentType: "application/json", sizeBytes: 22 }),
  },
  "GET /api/issues/:id/attachments/:attachmentId/content": {
    allowedStatus: 200,
    prepare: async ({ world }) => {
      const issueId = world.auth.a.issue.id;
      const stored = await storeAttachment(world.prisma, await exportHoldInstanceRoot(), {
        companyId: world.companyId,
        issueId,
        fileName: "matrix.txt",
        contentType: "text/plain",
        bytes: [Buffer.from("matrix bytes\n")],
        uploadedByUserId: null,
        actor: { type: "local_board", id: null },
      });
      return {
        params: { id: issueId, attachmentId: stored.id },
        request: { method: "GET", path: `/api/issues/${issueId}/attachments/${stored.id}/content` },
      };
    },
    checkAllowed: async (response) => {
      expect(response.headers.get("content-disposition")).toMatch(/^attachment;/);
      expect(await response.text()).toBe("matrix bytes\n");
    },
  },
  "POST /api/issues/:id/recovery-actions/reconstruct-workspace": {
    allowedStatus: 201,
    // R-RC-2, R-RC-3: a fresh discarded sandbox (its confirmed destruction receipt) per cell: an
    // allowed request records the intent, a refused one writes none.
    prepare: async ({ world, tag }) => {
      const source = await world.fresh.destroyedSource();
      return {
        params: { id: source.issueId },
        request: {
          method: "POST",
          path: `/api/issues/${source.issueId}/recovery-actions/reconstruct-workspace`,
          body: {
            actionId: source.actionId,
            sourceRunId: source.runId,
            leaseId: source.leaseId,
            attachmentIds: source.attachmentIds,
            description: "The sandbox was destroyed; rebuild the work from the saved notes.",
            externalActionOutcomes: [],
            sourceStatusVersion: 2,
            requestId: `matrix ${tag}`,
          },
        },
        tookEffect: async () => (await world.prisma.reconstructionIntent.count({ where: { recoveryActionId: source.actionId } })) === 1,
      };
    },
    checkAllowed: async (response) => expect(await json(response)).toMatchObject({ kind: "recorded", intent: { status: "pending" } }),
  },
  "POST /api/issues/:id/recovery-actions/resolve": {
    allowedStatus: 200,
    // R-RR-5: a fresh legacy repair hold per cell; an allowed resolution records it, a refused one leaves it open.
    prepare: async ({ world }) => {
      const hold = await world.fresh.fileHold();
      return {
        params: { id: hold.issueId },
        request: { method: "POST", path: `/api/issues/${hold.issueId}/recovery-actions/resolve`, body: restoredBody(hold) },
        tookEffect: async () => (await world.prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: hold.actionId } })).status !== "active",
      };
    },
    checkAllowed: async (response) => expect(await json(response)).toMatchObject({ outcome: "restored", status: "resolved" }),
  },
  "POST /api/issues/:id/recovery-actions/resume-workspace-finalization": {
    allowedStatus: 200,
    // R-ATT-1: a fresh unverified-owner hold per cell; an allowed attestation releases exactly
    // its receipt, a refused one leaves it.
    prepare: async ({ world }) => {
      const hold = await world.fresh.ownerHold();
      return {
        params: { id: hold.issueId },
        request: {
          method: "POST",
          path: `/api/issues/${hold.issueId}/recovery-actions/resume-workspace-finalization`,
          body: {
            actionId: hold.actionId,
            runId: hold.runId,
            ownerToken: hold.receipt.token,
            controllerAndCopybackStopped: true,
            stopEvidence: "platform console: controller pod and copyback children terminated at 10:02",
          },
        },
        tookEffect: async () => !(await carriesReceipt(world.prisma, hold.runId)),
      };
    },
    checkAllowed: async (response) =>
      expect(await json(response)).toMatchObject({ status: "attested", leaseIds: [expect.any(String)] }),
  },
  "POST /api/issues/:id/recovery-actions/retry-workspace-export": {
    allowedStatus: 200,
    // R-EX-2: a fresh export-retry hold (a real stopped local sandbox) per cell: an allowed retry
    // re-admits its run, a refused one leaves it terminal.
    prepare: async ({ world }) => {
      const hold = await world.fresh.exportHold();
      return {
        params: { id: hold.issueId },
        request: {
          method: "POST",
          path: `/api/issues/${hold.issueId}/recovery-actions/retry-workspace-export`,
          body: { actionId: hold.actionId, runId: hold.runId, repairNote: "Restored the transport; the files were kept." },
        },
        tookEffect: () => exportRetryReadmitted(world.prisma, hold.runId),
      };
    },
    checkAllowed: async (response) => expect(await json(response)).toMatchObject({ status: "readmitted", retryState: "readmitted" }),
  },
  "GET /api/runs/:id": {
    allowedStatus: 200,
    prepare: ({ world }) => ({
      params: { id: world.auth.a.run.id },
      request: { method: "GET", path: `/api/runs/${world.auth.a.run.id}` },
    }),
    checkAllowed: async (response, { world }) =>
      expect(await json(response)).toMatchObject({ run: { id: world.auth.a.run.id } }),
  },
  "GET /api/runs/:id/agent-output": {
    allowedStatus: 200,
    prepare: ({ world }) => ({
      params: { id: world.auth.a.run.id },
      request: { method: "GET", path: `/api/runs/${world.auth.a.run.id}/agent-output` },
    }),
    checkAllowed: async (response) => {
      expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(await response.text()).toBe("");
    },
  },
  "POST /api/runs/:id/stop": {
    allowedStatus: 202,
    // R-RC-7: a fresh running run per cell; an allowed Stop records its request, a refused one none.
    prepare: async ({ world }) => {
      const run = await world.fresh.runningRun();
      return {
        params: { id: run.id },
        request: { method: "POST", path: `/api/runs/${run.id}/stop` },
        tookEffect: async () => {
          const row = await world.prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.id } });
          return typeof (row.runnerProfileJson as Record<string, unknown>).stopRequest === "object";
        },
      };
    },
    checkAllowed: async (response) => expect(await json(response)).toMatchObject({ status: "stop_requested", duplicate: false }),
  },
  "POST /api/runs/:id/finish": {
    allowedStatus: 200,
    // A fresh running run of the agent key's own agent per cell: an allowed finish publishes its
    // result; a refused one must leave it without any.
    prepare: async ({ world, tag }) => {
      const run = await world.fresh.runningRun();
      return {
        params: { id: run.id },
        request: {
          method: "POST",
          path: `/api/runs/${run.id}/finish`,
          body: {
            dedupeKey: `matrix ${tag}`,
            result: { schema: "copyback.run-result.v1", outcome: "in_review", summary: "done" },
          },
        },
      };
    },
    checkAllowed: async (response) =>
      expect(await json(response)).toMatchObject({ status: "accepted", duplicate: false }),
  },
};

/** Routes whose cells are the tRPC matrix's HTTP pass rather than requests of their own. */
export const COVERED_BY_TRPC_MATRIX: ReadonlySet<string> = new Set([
  "GET /api/trpc/:trpc",
  "POST /api/trpc/:trpc",
]);
