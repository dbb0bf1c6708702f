// Archives in and out of a sandbox, streamed and checked. The sandbox side states the size and
// sha256 of the file it holds (sha256sum in the sandbox); the bytes are streamed through a check
// that fails the stream (transfer_dropped) unless exactly those bytes arrived: a truncated or
// broken download is a transport failure (R-RR-1), never a short archive handed on. Nothing is
// buffered whole in the controller: downloads are piped, uploads read from a spool file.
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { PassThrough, Transform, type Readable, type TransformCallback } from "node:stream";
import type { Sandbox } from "@daytonaio/sdk";
import type { DaytonaClient } from "./client";
import { runScript } from "./commands";
import { droppedDownloadOf, transferDropped } from "./errors";
import { LAYOUT, shellQuote } from "./layout";

export interface FileDigest {
  size: number;
  sha256: string;
}

/** Pure: the digest a script printed as `<size>\n<sha256>  <path>`, or null. */
export function parseDigest(output: string): FileDigest | null {
  const match = /(?:^|\n)(\d+)\s*\n([0-9a-f]{64})\s/.exec(output);
  if (!match) return null;
  return { size: Number(match[1]), sha256: match[2] as string };
}

/** Shell: print the digest of `path` in the form parseDigest reads. */
export const digestScript = (path: string) => `wc -c < ${shellQuote(path)} && sha256sum ${shellQuote(path)}`;

export const transferPath = (kind: string) => `${LAYOUT.transfers}/${kind}-${randomBytes(8).toString("hex")}.tar`;

/** A stream check: exactly `expected` bytes with that sha256, or the stream errors. */
export class DigestCheck extends Transform {
  private readonly hash = createHash("sha256");
  private bytes = 0;

  constructor(
    private readonly expected: FileDigest,
    private readonly what: string,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.expected.size) return done(transferDropped(`${this.what}: more bytes than the sandbox sent`));
    this.hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    if (this.bytes !== this.expected.size || this.hash.digest("hex") !== this.expected.sha256) {
      return done(transferDropped(`${this.what}: ${this.bytes} of ${this.expected.size} bytes arrived intact`));
    }
    done();
  }
}

export interface DownloadOptions {
  what: string;
  signal?: AbortSignal | undefined;
  timeoutSec: number;
  /** Called once the stream settled (ended, failed or was destroyed): removes the sandbox's copy. */
  onSettled?: () => void;
}

/** `path` from the sandbox as a checked stream. */
export async function downloadChecked(client: DaytonaClient, sandbox: Sandbox, path: string, digest: FileDigest, options: DownloadOptions): Promise<Readable> {
  const source = await client
    .call(
      options.what,
      () => sandbox.fs.downloadFileStream(path, { timeout: options.timeoutSec, ...(options.signal ? { signal: options.signal } : {}) }),
      { sandboxId: sandbox.id, ...(options.signal ? { signal: options.signal } : {}) },
    )
    .catch((error: unknown) => {
      // A download cut off before its first file byte arrived (the connection reset after the
      // request went out) is the same dropped transfer as one cut off later (R-RR-1).
      throw droppedDownloadOf(error, options.what);
    });
  const check = new DigestCheck(digest, options.what);
  const out = new PassThrough();
  let settled = false;
  const settle = (error?: Error) => {
    if (settled) return;
    settled = true;
    if (error) out.destroy(error);
    options.onSettled?.();
  };
  source.once("error", (error: Error) => {
    // An abort stays an abort (the export deadline names it); anything else broke the transfer.
    settle(options.signal?.aborted ? (options.signal.reason instanceof Error ? options.signal.reason : error) : transferDropped(options.what, error));
    check.destroy();
  });
  check.once("error", (error: Error) => {
    settle(error);
    source.destroy();
  });
  out.once("close", () => {
    if (!settled) {
      source.destroy();
      check.destroy();
    }
    settle();
  });
  check.once("end", () => settle());
  source.pipe(check).pipe(out);
  return out;
}

/** Uploads a spooled file to `path` and checks in the sandbox that exactly its bytes arrived. */
export async function uploadChecked(client: DaytonaClient, sandbox: Sandbox, file: string, digest: FileDigest, path: string, options: { what: string; timeoutSec: number; signal?: AbortSignal }): Promise<void> {
  // Each try reads the spool file from its start, so a retried upload sends the whole file again.
  await client.call(
    options.what,
    () => sandbox.fs.uploadFileStream(createReadStream(file), path, { timeout: options.timeoutSec, ...(options.signal ? { signal: options.signal } : {}) }),
    { sandboxId: sandbox.id, ...(options.signal ? { signal: options.signal } : {}) },
  );
  const arrived = parseDigest((await runScript(client, sandbox, digestScript(path), { what: `${options.what} (check)`, timeoutSec: 120, signal: options.signal })).output);
  if (!arrived || arrived.size !== digest.size || arrived.sha256 !== digest.sha256) {
    throw transferDropped(`${options.what}: the sandbox holds ${arrived ? `${arrived.size} bytes that differ` : "no readable copy"}`);
  }
}
