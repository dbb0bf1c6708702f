import { z } from "zod";
import { attachmentContentPath, listAttachments } from "@copyback/core/board";
import { companyProcedure } from "~/server/trpc";
import { readIssueInCompany } from "./load-issue";

export const issueAttachmentsInput = z.object({ issueId: z.uuid() });

export const issueAttachment = z.object({
  id: z.uuid(),
  fileName: z.string(),
  contentType: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  sha256: z.string(),
  createdAt: z.date(),
  /** The bytes, through the REST route (a download; tRPC carries no files). */
  contentUrl: z.string(),
});

export const issueAttachmentsOutput = z.array(issueAttachment);

/** The task's attachments, oldest first (uploads go through POST /api/issues/:id/attachments). */
export const listIssueAttachments = companyProcedure("issues:read")
  .input(issueAttachmentsInput)
  .output(issueAttachmentsOutput)
  .query(async ({ ctx, input }) => {
    await readIssueInCompany(ctx, input.issueId);
    const rows = await listAttachments(ctx.db, { companyId: ctx.companyId, issueId: input.issueId });
    return rows.map((row) => ({ ...row, contentUrl: attachmentContentPath(input.issueId, row.id) }));
  });
