import { describe, expect, it } from "vitest";
import {
  canonicalResultSha256,
  MAX_RESULT_CANONICAL_BYTES,
  RUN_RESULT_SCHEMA,
  validateRunResult,
} from "./result-document";

const valid = { schema: RUN_RESULT_SCHEMA, outcome: "in_review", summary: "Added the parser." };

describe("run result document v1", () => {
  it("accepts a minimal document and one with notes", () => {
    expect(validateRunResult(valid).kind).toBe("valid");
    expect(validateRunResult({ ...valid, outcome: "done", notes: "n" }).kind).toBe("valid");
    expect(validateRunResult({ ...valid, outcome: "blocked" }).kind).toBe("valid");
  });

  it.each([
    ["a wrong schema", { ...valid, schema: "copyback.run-result.v2" }],
    ["an unknown outcome", { ...valid, outcome: "failed" }],
    ["an empty summary", { ...valid, summary: "" }],
    ["a summary over 20000 characters", { ...valid, summary: "x".repeat(20_001) }],
    ["notes over 20000 characters", { ...valid, notes: "x".repeat(20_001) }],
    ["an unknown field (strict)", { ...valid, changedFiles: ["a"] }],
    ["a missing outcome", { schema: RUN_RESULT_SCHEMA, summary: "s" }],
    ["an array", [valid]],
    ["null", null],
  ])("rejects %s with result_schema_invalid", (_, document) => {
    const verdict = validateRunResult(document);
    expect(verdict).toMatchObject({ kind: "invalid", code: "result_schema_invalid" });
  });

  it("rejects a document above 256 KiB of canonical JSON with result_too_large", () => {
    const big = { ...valid, notes: "x".repeat(MAX_RESULT_CANONICAL_BYTES) };
    expect(validateRunResult(big)).toMatchObject({ kind: "invalid", code: "result_too_large" });
  });

  it("hashes RFC 8785 canonical JSON: key order and number spelling do not matter", () => {
    const a = canonicalResultSha256({ b: 1, a: [1.0, "x"] });
    const b = canonicalResultSha256({ a: [1, "x"], b: 1e0 });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(canonicalResultSha256({ a: 2 })).not.toBe(canonicalResultSha256({ a: 1 }));
    expect(validateRunResult(valid).sha256).toBe(canonicalResultSha256({ ...valid }));
  });

  it("refuses a value without a JSON form", () => {
    expect(() => canonicalResultSha256(undefined)).toThrow(TypeError);
  });
});
