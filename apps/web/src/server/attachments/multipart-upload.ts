// The file of a `multipart/form-data` upload (what `curl -F file=@notes.md` and a plain HTML form
// send) as a stream, for POST /api/issues/:id/attachments. The platform's `request.formData()`
// reads the whole body into memory before it answers, with no cap, so a 25 MiB upload would cost
// twice that and an endless one everything: @fastify/busboy parses as the body arrives instead,
// and this module feeds it one chunk at a time, waiting while the file's consumer (the attachment
// store, writing to disk) catches up. Memory stays at a few stream buffers whatever is sent.
//
// Invariants:
// - The whole body is capped while it is read (the file's cap plus MULTIPART_OVERHEAD_BYTES for
//   boundaries, part headers and small fields): past it, 413 `attachment_too_large`, and reading
//   stops. The file part alone is capped at the attachment cap the same way.
// - Exactly one file part. The file's bytes iterable completes only once the whole body has been
//   parsed, so a second file part, a malformed ending or an oversized body fails the iterable
//   before the store links the file and writes its row: nothing is stored on any error.
// - Non-file fields are read (each truncated at MAX_FIELD_BYTES) and ignored; the file's name and
//   media type are its part's `filename` and `Content-Type`.
import { Busboy, type BusboyFileStream, type BusboyInstance } from "@fastify/busboy";
import { DomainError } from "@copyback/core/errors";
import { attachmentTooLarge } from "@copyback/core/board";

/** Room for the multipart framing around the file: boundaries, part headers, a few small fields. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/** Non-file fields a form may carry along (a submit button's name, a CSRF token): ignored. */
const MAX_FIELDS = 16;
const MAX_FIELD_BYTES = 4 * 1024;
/** All parts, the file included: more is not one form with one file. */
const MAX_PARTS = MAX_FIELDS + 2;
const MAX_PART_HEADER_PAIRS = 16;

export function isMultipartFormData(contentType: string | null): boolean {
  return /^multipart\/form-data\s*(;|$)/i.test(contentType?.trim() ?? "");
}

export const multipartErrors = {
  missingFile: () => new DomainError("invalid", "file_part_missing", "The form has no file part; send the file as one part with a filename (curl -F file=@notes.md)."),
  multipleFiles: () => new DomainError("invalid", "file_parts_multiple", "The form has more than one file part; attach one file per request."),
  tooManyParts: () => new DomainError("invalid", "multipart_too_many_parts", `The form has more than ${MAX_PARTS} parts; send one file part.`),
  malformed: () => new DomainError("invalid", "multipart_invalid", "The multipart/form-data body could not be read (a missing boundary or an incomplete body)."),
};

export interface MultipartFile {
  /** The part's `filename` as sent (undecided: the store's file-name rules apply), null if none. */
  fileName: string | null;
  /** The part's media type (text/plain when the part names none, as RFC 7578 says). */
  contentType: string;
  /**
   * The file's bytes. Completes only once the whole body was read and held no other file part;
   * throws the request's DomainError otherwise.
   */
  bytes: AsyncIterable<Uint8Array>;
  /** Stops reading the body and the parser (idempotent). Always call it once the upload is over. */
  close(): Promise<void>;
}

export interface MultipartLimits {
  maxFileBytes: number;
  /** The whole body's cap (the file's cap plus the framing). */
  maxBodyBytes: number;
}

/**
 * Reads the body up to its one file part's headers and answers that part, its bytes still to come.
 * Throws (after releasing the body) when the body ends without a file part or fails before one.
 */
export async function openMultipartFile(req: Request, limits: MultipartLimits): Promise<MultipartFile> {
  let parser: BusboyInstance;
  try {
    parser = new Busboy({
      headers: { "content-type": req.headers.get("content-type") ?? "" },
      // Plain `filename="…"` values are UTF-8 (what browsers and curl send).
      defCharset: "utf8",
      // The name as sent: the store's own rule (decideAttachmentFileName) drops any folder part,
      // the same for both upload forms.
      preservePath: true,
      limits: { fileSize: limits.maxFileBytes, files: 1, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES, parts: MAX_PARTS, headerPairs: MAX_PART_HEADER_PAIRS },
    });
  } catch {
    // No boundary in the Content-Type.
    throw multipartErrors.malformed();
  }

  let failure: DomainError | null = null;
  let finished = false;
  let closed = false;
  let file: { stream: BusboyFileStream; fileName: string | null; contentType: string } | null = null;
  const waiters = new Set<() => void>();
  const changed = () => {
    for (const wake of [...waiters]) wake();
    waiters.clear();
  };
  const nextChange = () => new Promise<void>((resolve) => waiters.add(resolve));
  const reader = req.body?.getReader() ?? null;

  const fail = (error: DomainError) => {
    if (failure || finished) return;
    failure = error;
    // A consumer waiting for the file's next chunk gets the error instead of waiting forever.
    file?.stream.destroy(error);
    void reader?.cancel().catch(() => undefined);
    changed();
  };

  parser.on("file", (_field, stream, fileName, _encoding, mimeType) => {
    // Errors reach the consumer through the iterator; an unread stream must not throw them.
    stream.on("error", () => undefined);
    stream.on("limit", () => fail(attachmentTooLarge(limits.maxFileBytes)));
    file = { stream, fileName: fileName === undefined ? null : fileName, contentType: mimeType };
    changed();
  });
  // `files: 1`: a second file part is skipped unread and announced here.
  parser.on("filesLimit", () => fail(multipartErrors.multipleFiles()));
  parser.on("partsLimit", () => fail(multipartErrors.tooManyParts()));
  parser.on("fieldsLimit", () => fail(multipartErrors.tooManyParts()));
  parser.on("field", () => undefined);
  parser.on("error", () => fail(multipartErrors.malformed()));
  parser.on("finish", () => {
    if (failure) return;
    finished = true;
    changed();
  });

  // The pump: one chunk into the parser at a time, waiting for it to drain (it waits in turn for
  // the file's consumer), counting every byte against the body's cap.
  const pump = (async () => {
    if (!reader) {
      parser.end();
      return;
    }
    let total = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (failure || closed) return;
        total += value.byteLength;
        if (total > limits.maxBodyBytes) return fail(attachmentTooLarge(limits.maxFileBytes));
        if (!parser.write(value)) {
          const drained = new Promise<void>((resolve) => parser.once("drain", resolve));
          await Promise.race([drained, nextChange()]);
          if (failure || closed) return;
        }
      }
      // A read ended by fail() or close() is not the body's end.
      if (failure || closed) return;
      parser.end();
    } catch {
      // The client went away mid-body, or close() cancelled the read.
      fail(multipartErrors.malformed());
    }
  })();

  const close = async () => {
    if (closed) return;
    closed = true;
    await reader?.cancel().catch(() => undefined);
    changed();
    await pump;
    if (!finished) parser.destroy();
  };

  while (!file && !failure && !finished) await nextChange();
  const opened = file as { stream: BusboyFileStream; fileName: string | null; contentType: string } | null;
  if (failure || !opened) {
    await close();
    throw failure ?? multipartErrors.missingFile();
  }

  async function* bytes(): AsyncIterable<Uint8Array> {
    for await (const chunk of opened!.stream as AsyncIterable<Buffer>) yield chunk;
    // The rest of the body (small fields, the closing boundary, or a second file part) decides
    // whether this file may be stored.
    while (!finished && !failure && !closed) await nextChange();
    if (failure) throw failure;
    if (!finished) throw multipartErrors.malformed();
  }

  return { fileName: opened.fileName, contentType: opened.contentType, bytes: bytes(), close };
}
