// R-RC-5: the check of one saved source's bytes as they flow into the sandbox, against the sha256
// and size the intent recorded (R-RC-3). No I/O of its own: a Transform that passes the bytes on
// while hashing them, errors as soon as more bytes than recorded arrive, and at the end errors
// instead of ending when the size or the hash differs. The provider places inputs only from
// streams that ended (providers/types.ts placeInputs), so bytes that fail the check are never
// delivered; the verdict is also kept here, for the controller, whatever the provider reports.
import { createHash } from "node:crypto";
import { Transform } from "node:stream";
import { DomainError } from "../../errors";

export interface SourceRefusal {
  code: "attachment_changed" | "attachment_unavailable";
  attachmentId: string;
  message: string;
}

/** The first refusal of a placement (the controller's verdict, not the provider's). */
export class SourceVerdict {
  #refusal: SourceRefusal | null = null;

  get refusal(): SourceRefusal | null {
    return this.#refusal;
  }

  refuse(refusal: SourceRefusal): DomainError {
    this.#refusal ??= refusal;
    return new DomainError("conflict", refusal.code, refusal.message, { attachmentId: refusal.attachmentId });
  }
}

export function verifyingStream(expected: { attachmentId: string; sha256: string; sizeBytes: number }, verdict: SourceVerdict): Transform {
  const hash = createHash("sha256");
  let size = 0;
  const changed = (what: string) =>
    verdict.refuse({ code: "attachment_changed", attachmentId: expected.attachmentId, message: `The stored bytes of attachment ${expected.attachmentId} no longer match its recorded hash (${what}).` });
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > expected.sizeBytes) return callback(changed(`more than ${expected.sizeBytes} bytes`));
      hash.update(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      if (size !== expected.sizeBytes) return callback(changed(`${size} bytes, not ${expected.sizeBytes}`));
      const sha256 = hash.digest("hex");
      if (sha256 !== expected.sha256) return callback(changed(`sha256 ${sha256}`));
      callback();
    },
  });
}
