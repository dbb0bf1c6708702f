import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { SourceVerdict, verifyingStream } from "./verify-source";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const ID = "7d0c8f5e-3b1a-4c2d-9e8f-0a1b2c3d4e5f";

async function flow(chunks: string[], expected: { sha256: string; sizeBytes: number }, verdict = new SourceVerdict()) {
  const received: Buffer[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _e, cb) => (received.push(chunk), cb()) });
  const outcome = await pipeline(Readable.from(chunks.map((c) => Buffer.from(c))), verifyingStream({ attachmentId: ID, ...expected }, verdict), sink).then(
    () => "ended" as const,
    (error: unknown) => error,
  );
  return { outcome, verdict, received: Buffer.concat(received).toString() };
}

describe("a saved source's bytes on their way into the sandbox (R-RC-5)", () => {
  it("R-RC-5 bytes matching the recorded sha256 and size pass unchanged and the stream ends", async () => {
    const { outcome, verdict, received } = await flow(["saved ", "notes\n"], { sha256: sha256("saved notes\n"), sizeBytes: 12 });
    expect(outcome).toBe("ended");
    expect(received).toBe("saved notes\n");
    expect(verdict.refusal).toBeNull();
  });

  it("R-RC-5 bytes of the recorded size but another hash error the stream instead of ending it (attachment_changed)", async () => {
    const { outcome, verdict } = await flow(["SAVED notes\n"], { sha256: sha256("saved notes\n"), sizeBytes: 12 });
    expect(outcome).toMatchObject({ code: "attachment_changed" });
    expect(verdict.refusal).toMatchObject({ code: "attachment_changed", attachmentId: ID });
  });

  it("R-RC-5 fewer bytes than recorded, or more (stopped as soon as they exceed it), are refused", async () => {
    const short = await flow(["saved"], { sha256: sha256("saved notes\n"), sizeBytes: 12 });
    expect(short.outcome).toMatchObject({ code: "attachment_changed" });
    const long = await flow(["saved notes\n", "and more", "and more"], { sha256: sha256("saved notes\n"), sizeBytes: 12 });
    expect(long.outcome).toMatchObject({ code: "attachment_changed" });
    expect(long.received).toBe("saved notes\n");
  });

  it("R-RC-5 the verdict keeps the first refusal of a placement", async () => {
    const verdict = new SourceVerdict();
    await flow(["x"], { sha256: sha256("y"), sizeBytes: 1 }, verdict);
    verdict.refuse({ code: "attachment_unavailable", attachmentId: "other", message: "later" });
    expect(verdict.refusal).toMatchObject({ code: "attachment_changed", attachmentId: ID });
  });
});
