import { z } from "zod";
import { authorize } from "@copyback/core/auth";
import {
  listOpenActionsForIssue,
  noticeActionsOf,
  RESOLVABLE_CAUSES,
  deriveTaskNotice,
} from "@copyback/core/recovery";
import { consoleOrigin } from "~/server/auth/app-origin";
import { companyProcedure } from "~/server/trpc";
import { readIssueInCompany } from "../issues/load-issue";
import { actionDetails, actionDetailsSchema } from "./action-details";
import { loadExportHolds } from "./export-hold";
import { taskNoticeSchema } from "./notice-schema";

export const recoveryForIssueInput = z.object({ issueId: z.uuid() });

export const recoveryForIssueOutput = z.object({
  /** What the task view shows everyone who can read the task (core's deriveTaskNotice). */
  notice: taskNoticeSchema,
  /** "Recovery details": null unless the caller holds runtime:manage (R-UI-2). */
  details: z.array(actionDetailsSchema).nullable(),
});

/**
 * The task's recovery notice, plus Recovery details for the roles allowed to see them. Each
 * layer asks `authorize` for its own permission: missing or unknown role data grants neither, so
 * such a caller gets the read-only notice (R-UI-5). Live: issue_recovery_actions and
 * reconstruction_intents changes invalidate the `recovery` router's queries.
 */
export const getRecoveryForIssue = companyProcedure("issues:read")
  .input(recoveryForIssueInput)
  .output(recoveryForIssueOutput)
  .query(async ({ ctx, input }) => {
    const issue = await readIssueInCompany(ctx, input.issueId);
    const rows = await listOpenActionsForIssue(ctx.db, ctx.companyId, input.issueId);
    // R-RC-3, R-RC-5: each hold with its reconstruction intent's state (pending: continuing;
    // cancelled after a refused delivery: attention with the reason).
    const noticeActions = await noticeActionsOf(ctx.db, ctx.companyId, rows);
    const notice = deriveTaskNotice(noticeActions);
    const mayManage = authorize(ctx.principal, "runtime:manage", ctx.companyId).kind === "allow";
    if (!mayManage) return { notice, details: null };
    const mayAttest = authorize(ctx.principal, "runtime:confirm_owner_stop", ctx.companyId).kind === "allow";
    const origin = mayAttest ? consoleOrigin(ctx.headers) : null;
    // The export holds' run, lease, receipt, attempts and exact retry call.
    // R-EX-4, R-UI-2: with the task's status, for the copyback-failed hold's prefilled resolve call.
    const exportHolds = await loadExportHolds(ctx.db, ctx.companyId, rows, consoleOrigin(ctx.headers), issue.status);
    // R-UI-4: the file holds' source runs, for the file-recovery form (board operators only).
    const runIds = rows.filter((row) => RESOLVABLE_CAUSES.includes(row.cause) && row.runId).map((row) => row.runId as string);
    const runs = new Map(
      (runIds.length === 0 ? [] : await ctx.db.heartbeatRun.findMany({ where: { companyId: ctx.companyId, id: { in: runIds } }, select: { id: true, status: true, runtimeMode: true } })).map(
        (run) => [run.id, { status: run.status, runtimeMode: run.runtimeMode }] as const,
      ),
    );
    // R-RC-3: a pending delivery's deferral (code, since when), read with the notice's inputs.
    const deferrals = new Map(noticeActions.flatMap((a) => (a.reconstruction?.deferral ? [[a.id, a.reconstruction.deferral] as const] : [])));
    return { notice, details: rows.map((row) => actionDetails(row, { origin, mayAttest, exportHolds, issueStatus: issue.status, runs, deferrals })) };
  });
