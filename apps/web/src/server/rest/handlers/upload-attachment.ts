// POST /api/issues/:id/attachments: attach a file to the task, in either of two bodies:
// - the file's raw bytes: `Content-Type` is stored as its media type and `X-File-Name` names it,
//   percent-encoded UTF-8 (encodeURIComponent) since HTTP header values are not UTF-8;
// - `multipart/form-data` with exactly one file part (`curl -F file=@notes.md`, a plain HTML
//   form): the part's `filename` and `Content-Type` name and type it; other fields are ignored.
// Both stream to the store under the same cap and name rules. Board writers of the task's company
// (`issues:write`, the permission posting a message needs).
//
// Answers:
//   201 { id, fileName, sizeBytes, sha256, contentType, createdAt }  stored: the row and the bytes
//   413 attachment_too_large   over the cap (25 MiB; a multipart body may add 64 KiB of framing): nothing stored
//   422 file_name_missing / file_name_invalid / file_name_too_long: nothing stored
//   422 file_part_missing / file_parts_multiple / multipart_too_many_parts / multipart_invalid
//       (multipart only: no file part, two file parts, too many parts, a malformed body): nothing stored
//   503 instance_root_unknown  the console has no attachment store (COPYBACK_HOME unset)
import {
  DEFAULT_MAX_ATTACHMENT_BYTES,
  attachmentTooLarge,
  storeAttachment,
} from "@copyback/core/board";
import { isMultipartFormData, MULTIPART_OVERHEAD_BYTES, openMultipartFile } from "~/server/attachments/multipart-upload";
import { attachmentStoreRoot } from "~/server/attachments/store-root";
import { actorOf } from "~/server/routers/activity/actor";
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";

export const uploadAttachmentRoute = restRoute({
  method: "POST",
  path: "/api/issues/:id/attachments",
  permission: "issues:write",
  resource: issueFromPath,
  handler: async ({ req, db, principal, companyId, resource }) => {
    const root = attachmentStoreRoot();
    const multipart = isMultipartFormData(req.headers.get("content-type"));
    // The body's cap: the file's, plus the framing around it in a multipart body.
    const maxBodyBytes = DEFAULT_MAX_ATTACHMENT_BYTES + (multipart ? MULTIPART_OVERHEAD_BYTES : 0);
    // A declared length over the cap is refused before a byte is read.
    const declared = Number(req.headers.get("content-length") ?? "NaN");
    if (Number.isFinite(declared) && declared > maxBodyBytes) throw attachmentTooLarge(DEFAULT_MAX_ATTACHMENT_BYTES);
    const who = {
      companyId,
      issueId: resource.id,
      uploadedByUserId: principal.kind === "board_user" ? principal.userId : null,
      actor: actorOf(principal),
    };
    let stored;
    if (multipart) {
      const file = await openMultipartFile(req, { maxFileBytes: DEFAULT_MAX_ATTACHMENT_BYTES, maxBodyBytes });
      try {
        // The bytes complete only once the whole form was read with no second file part, so the
        // store links the file and writes its row only for a valid form.
        stored = await storeAttachment(db, root, { ...who, fileName: file.fileName, contentType: file.contentType, bytes: file.bytes });
      } finally {
        await file.close();
      }
    } else {
      stored = await storeAttachment(db, root, {
        ...who,
        fileName: decodeFileName(req.headers.get("x-file-name")),
        contentType: req.headers.get("content-type"),
        bytes: bodyChunks(req),
      });
    }
    return Response.json({ ...stored, createdAt: stored.createdAt.toISOString() }, { status: 201, headers: { "cache-control": "no-store" } });
  },
});

/** The header's percent-encoding undone; a value that is not valid encoding is taken as sent. */
function decodeFileName(header: string | null): string | null {
  if (header === null) return null;
  try {
    return decodeURIComponent(header);
  } catch {
    return header;
  }
}

async function* bodyChunks(req: Request): AsyncIterable<Uint8Array> {
  if (!req.body) return;
  const reader = req.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    // Stops reading a body refused half-way (too large).
    await reader.cancel().catch(() => undefined);
  }
}
