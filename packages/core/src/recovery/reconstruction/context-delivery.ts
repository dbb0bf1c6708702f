// R-RC-5: how the fresh session gets its WHOLE reconstruction context, pure. The agent used to get
// it as one environment variable only, but Linux refuses any single environment string over
// 128 KiB (MAX_ARG_STRLEN) and the whole argv+env over ARG_MAX: exec fails with E2BIG. The largest
// intent an operator can record (contract.ts: a 20,000-character description, 500
// attachments, 200 external actions of 2,000 + 20,000 characters) is about 4.5 MB as JSON. So:
//   - where the provider can place inputs, the context is ALSO a read-only file among them
//     (`<inputs>/reconstruction.json`, place-sources.ts) and the agent gets its path as
//     COPYBACK_RECONSTRUCTION_FILE; COPYBACK_RECONSTRUCTION keeps the inline JSON while it is at
//     most MAX_INLINE_CONTEXT_BYTES, and above that holds a small reference instead: where the file
//     is, its size and sha256, and that it was not inlined (`inlined: false`);
//   - where the provider cannot place inputs and the context is too large to inline, the run is
//     refused (`reconstruction_context_too_large`) through the reconstruction's refusal path
//     (the decision withdrawn, its hold reopened), before its sandbox is acquired: never an E2BIG
//     at agent start.
import { createHash } from "node:crypto";

/** The file's name directly in the inputs directory: not a UUID, so no attachment's folder can be named so. */
export const RECONSTRUCTION_CONTEXT_FILE = "reconstruction.json";

/**
 * The most UTF-8 bytes of context JSON kept inline in COPYBACK_RECONSTRUCTION. Half of Linux's
 * 128 KiB limit on one environment string (MAX_ARG_STRLEN, which counts `NAME=value`), so the
 * variable, its name, the agent's other variables and its argv stay far under both that limit and
 * ARG_MAX, whatever the adapter adds.
 */
export const MAX_INLINE_CONTEXT_BYTES = 64 * 1024;

export const RECONSTRUCTION_VARIABLE = "COPYBACK_RECONSTRUCTION";
export const RECONSTRUCTION_FILE_VARIABLE = "COPYBACK_RECONSTRUCTION_FILE";
/** The shape COPYBACK_RECONSTRUCTION holds when the context was not inlined. */
export const RECONSTRUCTION_CONTEXT_REF_SCHEMA = "copyback.reconstruction-context-ref.v1";

export const CONTEXT_TOO_LARGE_CODE = "reconstruction_context_too_large";

/** The context as the agent reads it: the exact JSON text, its UTF-8 size and sha256. */
export interface ContextDocument {
  text: string;
  bytes: number;
  sha256: string;
}

export function contextDocument(context: unknown): ContextDocument {
  const text = JSON.stringify(context);
  return { text, bytes: Buffer.byteLength(text, "utf8"), sha256: createHash("sha256").update(text, "utf8").digest("hex") };
}

/** What COPYBACK_RECONSTRUCTION says when the context is too large to inline. */
export interface ContextReference {
  schema: typeof RECONSTRUCTION_CONTEXT_REF_SCHEMA;
  inlined: false;
  /** The file's path as the agent sees it (also COPYBACK_RECONSTRUCTION_FILE). */
  file: string;
  sizeBytes: number;
  sha256: string;
  reason: string;
}

export type ContextDelivery =
  | { kind: "deliver"; inlined: boolean; env: Record<string, string> }
  | { kind: "too_large"; code: typeof CONTEXT_TOO_LARGE_CODE; bytes: number; message: string };

const KIB = MAX_INLINE_CONTEXT_BYTES / 1024;

/** The agent's reconstruction variables for `document`, placed as `file` (null: the provider cannot place it). */
export function decideContextDelivery(document: ContextDocument, file: string | null): ContextDelivery {
  const fileEnv: Record<string, string> = file === null ? {} : { [RECONSTRUCTION_FILE_VARIABLE]: file };
  if (document.bytes <= MAX_INLINE_CONTEXT_BYTES) return { kind: "deliver", inlined: true, env: { [RECONSTRUCTION_VARIABLE]: document.text, ...fileEnv } };
  if (file !== null) {
    const reference: ContextReference = {
      schema: RECONSTRUCTION_CONTEXT_REF_SCHEMA,
      inlined: false,
      file,
      sizeBytes: document.bytes,
      sha256: document.sha256,
      reason: `The reconstruction context is ${document.bytes} bytes, more than the ${KIB} KiB kept inline in ${RECONSTRUCTION_VARIABLE}; read it from the file.`,
    };
    return { kind: "deliver", inlined: false, env: { [RECONSTRUCTION_VARIABLE]: JSON.stringify(reference), ...fileEnv } };
  }
  return {
    kind: "too_large",
    code: CONTEXT_TOO_LARGE_CODE,
    bytes: document.bytes,
    message:
      `The reconstruction context is ${document.bytes} bytes, more than the ${KIB} KiB an agent's environment variable carries (Linux refuses one over 128 KiB at exec), ` +
      "and the sandbox's provider cannot place it as a file (no placeInputs). Record a shorter description or shorter external-action outcomes, or run the agent in an environment whose provider places inputs.",
  };
}
