// The document an agent submits when it finishes a turn (the finish API body or the process
// adapter's result file). Version 1 is deliberately small: the outcome the task should take and
// a human summary. Anything else is rejected, not silently dropped (a strict object), so an agent
// on a newer schema learns it at once instead of losing fields.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { z } from "zod";

export const RUN_RESULT_SCHEMA = "copyback.run-result.v1";

/** Above this canonical size a document is stored as rejected with `result_too_large`. */
export const MAX_RESULT_CANONICAL_BYTES = 256 * 1024;

export const runResultDocument = z.strictObject({
  schema: z.literal(RUN_RESULT_SCHEMA),
  outcome: z.enum(["in_review", "done", "blocked"]),
  summary: z.string().min(1).max(20_000),
  notes: z.string().max(20_000).optional(),
});

export type RunResultDocument = z.infer<typeof runResultDocument>;
export type RunResultOutcome = RunResultDocument["outcome"];

export type ResultValidation =
  | { kind: "valid"; document: RunResultDocument; canonical: string; sha256: string }
  | { kind: "invalid"; code: "result_schema_invalid" | "result_too_large"; message: string; canonical: string; sha256: string };

/** RFC 8785 (JCS) canonical JSON; throws for values JSON cannot represent (undefined, functions, cycles). */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("The value has no JSON representation.");
  return text;
}

/** sha256 hex of the RFC 8785 canonical JSON: equal documents hash equally whatever their key order. */
export function canonicalResultSha256(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value), "utf8").digest("hex");
}

/**
 * Validates a submitted document. Pure: the caller stores the verdict (an invalid document is
 * kept as `rejected` with its code, never accepted). `document` must already be parsed JSON.
 */
export function validateRunResult(document: unknown): ResultValidation {
  const canonical = canonicalJson(document);
  const sha256 = createHash("sha256").update(canonical, "utf8").digest("hex");
  if (Buffer.byteLength(canonical, "utf8") > MAX_RESULT_CANONICAL_BYTES) {
    return {
      kind: "invalid",
      code: "result_too_large",
      message: `The result document exceeds ${MAX_RESULT_CANONICAL_BYTES} bytes of canonical JSON.`,
      canonical,
      sha256,
    };
  }
  const parsed = runResultDocument.safeParse(document);
  if (!parsed.success) {
    return {
      kind: "invalid",
      code: "result_schema_invalid",
      message: `The result document does not match ${RUN_RESULT_SCHEMA}: ${z.prettifyError(parsed.error)}`,
      canonical,
      sha256,
    };
  }
  return { kind: "valid", document: parsed.data, canonical, sha256 };
}
