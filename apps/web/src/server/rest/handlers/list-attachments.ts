// GET /api/issues/:id/attachments: the task's attachments, oldest first, each with the path of
// its bytes. `issues:read`.
//
// Answers: 200 { attachments: [{ id, fileName, sizeBytes, sha256, contentType, createdAt, contentUrl }] }
import { listAttachments, attachmentContentPath } from "@copyback/core/board";
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";

export const listAttachmentsRoute = restRoute({
  method: "GET",
  path: "/api/issues/:id/attachments",
  permission: "issues:read",
  resource: issueFromPath,
  handler: async ({ db, companyId, resource }) => {
    const attachments = await listAttachments(db, { companyId, issueId: resource.id });
    return {
      attachments: attachments.map((a) => ({ ...a, createdAt: a.createdAt.toISOString(), contentUrl: attachmentContentPath(resource.id, a.id) })),
    };
  },
});
