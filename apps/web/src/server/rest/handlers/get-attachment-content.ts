// GET /api/issues/:id/attachments/:attachmentId/content: an attachment's stored bytes, always as
// a download (never rendered by the console's origin). Board readers (`issues:read`) and, R-RC-5,
// the run-scoped key of a run of this same task (the reconstruction's agent verifies each
// attachment's sha256 before rebuilding files); any other agent reads not found.
//
// Answers:
//   200 the bytes; Content-Type (stored), Content-Length, X-Content-SHA256 (the sha256 recorded
//       at upload), Content-Disposition: attachment
//   404 not_found            no such attachment on this task (or the caller may not know of it)
//   409 attachment_changed   the stored file's size no longer matches its upload
//   503 attachment_unavailable / instance_root_unknown
import { Readable } from "node:stream";
import { z } from "zod";
import { readAttachment } from "@copyback/core/board";
import { attachmentStoreRoot } from "~/server/attachments/store-root";
import { jsonError } from "../responses";
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";
import { isTaskRunAgent } from "../task-run-agent";

const uuid = z.uuid();

export const getAttachmentContentRoute = restRoute({
  method: "GET",
  path: "/api/issues/:id/attachments/:attachmentId/content",
  permission: "issues:read",
  resource: issueFromPath,
  // R-RC-5: the task's own run agent fetches what it must verify.
  agentAccess: (db, agent, issue) => isTaskRunAgent(db, agent, issue),
  handler: async ({ db, companyId, resource, params }) => {
    const attachmentId = params.attachmentId;
    if (attachmentId === undefined || !uuid.safeParse(attachmentId).success) return jsonError(404, { code: "not_found", message: "Not found." });
    const opened = await readAttachment(db, attachmentStoreRoot(), { companyId, issueId: resource.id, attachmentId });
    return new Response(Readable.toWeb(opened.stream) as ReadableStream<Uint8Array>, {
      status: 200,
      headers: {
        "content-type": opened.contentType,
        "content-length": String(opened.sizeBytes),
        "x-content-sha256": opened.sha256,
        "content-disposition": contentDisposition(opened.fileName),
        "x-content-type-options": "nosniff",
        "cache-control": "private, no-store",
      },
    });
  },
});

/** RFC 6266: an ASCII fallback name and the exact UTF-8 name (RFC 8187). */
export function contentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}
