// R-RC-5: the inline bound of the reconstruction context (context-delivery.ts), pure.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { contextDocument, decideContextDelivery, MAX_INLINE_CONTEXT_BYTES, RECONSTRUCTION_CONTEXT_FILE, RECONSTRUCTION_CONTEXT_REF_SCHEMA } from "./context-delivery";

const FILE = "/sandboxes/s/control/inputs/reconstruction.json";
/** A context whose JSON is exactly `bytes` UTF-8 bytes long. */
function contextOf(bytes: number): { description: string } {
  const empty = Buffer.byteLength(JSON.stringify({ description: "" }));
  return { description: "x".repeat(bytes - empty) };
}

describe("reconstruction context delivery (R-RC-5)", () => {
  it("R-RC-5 the inline bound is 64 KiB, well under Linux's 128 KiB for one environment string", () => {
    expect(MAX_INLINE_CONTEXT_BYTES).toBe(64 * 1024);
    expect(MAX_INLINE_CONTEXT_BYTES).toBeLessThan(128 * 1024);
    // Not a UUID: no attachment's folder (its id) can take the file's name.
    expect(RECONSTRUCTION_CONTEXT_FILE).not.toMatch(/^[0-9a-f-]{36}$/i);
  });

  it("R-RC-5 a document measures its UTF-8 bytes and hashes its exact text", () => {
    const document = contextDocument({ description: "é" });
    expect(document.text).toBe('{"description":"é"}');
    expect(document.bytes).toBe(20);
    expect(document.sha256).toBe(createHash("sha256").update(document.text).digest("hex"));
  });

  it("R-RC-5 up to the bound the JSON stays inline, with the file's path beside it when the provider placed one", () => {
    const document = contextDocument(contextOf(MAX_INLINE_CONTEXT_BYTES));
    expect(document.bytes).toBe(MAX_INLINE_CONTEXT_BYTES);
    expect(decideContextDelivery(document, FILE)).toEqual({ kind: "deliver", inlined: true, env: { COPYBACK_RECONSTRUCTION: document.text, COPYBACK_RECONSTRUCTION_FILE: FILE } });
    expect(decideContextDelivery(document, null)).toEqual({ kind: "deliver", inlined: true, env: { COPYBACK_RECONSTRUCTION: document.text } });
  });

  it("R-RC-5 one byte over the bound the variable holds a small reference: where the file is, its size and sha256, not inlined", () => {
    const document = contextDocument(contextOf(MAX_INLINE_CONTEXT_BYTES + 1));
    const delivery = decideContextDelivery(document, FILE);
    expect(delivery).toMatchObject({ kind: "deliver", inlined: false, env: { COPYBACK_RECONSTRUCTION_FILE: FILE } });
    const value = delivery.kind === "deliver" ? (delivery.env.COPYBACK_RECONSTRUCTION as string) : "";
    expect(JSON.parse(value)).toEqual({ schema: RECONSTRUCTION_CONTEXT_REF_SCHEMA, inlined: false, file: FILE, sizeBytes: MAX_INLINE_CONTEXT_BYTES + 1, sha256: document.sha256, reason: expect.stringContaining("64 KiB") });
    expect(Buffer.byteLength(value)).toBeLessThan(1024);
  });

  it("R-RC-5 over the bound without a file (a provider without placeInputs) the run is refused with a stable code", () => {
    const delivery = decideContextDelivery(contextDocument(contextOf(MAX_INLINE_CONTEXT_BYTES + 1)), null);
    expect(delivery).toMatchObject({ kind: "too_large", code: "reconstruction_context_too_large", bytes: MAX_INLINE_CONTEXT_BYTES + 1 });
    expect(delivery.kind === "too_large" ? delivery.message : "").toMatch(/64 KiB.*placeInputs/);
  });
});
