// The tar bytes of an archive file, inflated if it is gzip. Validation and extraction both read
// through this one function, so they see the same bytes (R-UA-2). The compression ratio is
// checked on every inflated chunk and the read is abandoned the moment it is exceeded: a
// decompression bomb is never inflated beyond a few chunks.
import { open, type FileHandle } from "node:fs/promises";
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { ArchiveReadError } from "./errors";
import { errnoOf } from "../../errors";
import type { ArchiveLimits } from "./limits";
import { fatal } from "./tar-walker";

export interface ByteStats {
  gzip: boolean;
  /** Bytes read from the file. */
  bytesRead: number;
  /** Tar bytes produced (equal to bytesRead for an uncompressed archive). */
  bytesInflated: number;
}

const PLAIN_READ = 1024 * 1024;
// Deflate expands at most ~1032:1, and zlib inflates a whole input chunk before the reader sees
// any of it: small compressed reads keep a bomb's overshoot to a few tens of MiB.
const GZIP_READ = 32 * 1024;
const GZIP_OUT = 64 * 1024;

function sniff(head: Buffer): "gzip" | "tar" | "unsupported" {
  if (head[0] === 0x1f && head[1] === 0x8b) return "gzip";
  // zstd and xz magics cannot start a valid UTF-8 tar path, so they are never mistaken for tar.
  if (head.subarray(0, 4).equals(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]))) return "unsupported";
  if (head.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])))
    return "unsupported";
  return "tar";
}

export async function* readArchiveBytes(
  file: FileHandle,
  limits: ArchiveLimits,
  stats: ByteStats,
): AsyncGenerator<Buffer> {
  const head = Buffer.alloc(6);
  const bytesRead = await readAt(file, head, 0);
  const format = sniff(head.subarray(0, bytesRead));
  if (format === "unsupported") {
    throw fatal("malformed_archive", "", "unsupported compression (only gzip is accepted)");
  }
  stats.gzip = format === "gzip";
  if (!stats.gzip) {
    for await (const chunk of readChunks(file, PLAIN_READ)) {
      stats.bytesRead += chunk.length;
      stats.bytesInflated += chunk.length;
      yield chunk;
    }
    return;
  }
  // Positional reads from the caller's handle (a file stream would close it when stopped early).
  yield* inflateChecked(readChunks(file, GZIP_READ), limits, stats);
}

/**
 * The tar bytes of an archive arriving as a stream of raw chunks (a transfer, an export): the
 * same sniffing, inflation and ratio checks as for a file. Read errors of the stream surface
 * as ArchiveReadError with the original error as its cause (a dropped transfer stays
 * recognisable for the retry policy, R-RR-1).
 */
export async function* streamArchiveBytes(
  raw: AsyncIterable<Uint8Array>,
  limits: ArchiveLimits,
  stats: ByteStats,
): AsyncGenerator<Buffer> {
  const iterator = guardReads(raw)[Symbol.asyncIterator]();
  const first: Buffer[] = [];
  let firstLength = 0;
  try {
    while (firstLength < 6) {
      const next = await iterator.next();
      if (next.done) break;
      first.push(next.value);
      firstLength += next.value.length;
    }
    const format = sniff(Buffer.concat(first, firstLength).subarray(0, 6));
    if (format === "unsupported") {
      throw fatal("malformed_archive", "", "unsupported compression (only gzip is accepted)");
    }
    stats.gzip = format === "gzip";
    const rest = (async function* () {
      yield* first;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value;
      }
    })();
    if (!stats.gzip) {
      for await (const chunk of rest) {
        stats.bytesRead += chunk.length;
        stats.bytesInflated += chunk.length;
        yield chunk;
      }
      return;
    }
    // Small compressed pieces keep a bomb's overshoot as small as for a file (GZIP_READ).
    const pieces = (async function* () {
      for await (const chunk of rest) {
        for (let at = 0; at < chunk.length; at += GZIP_READ)
          yield chunk.subarray(at, at + GZIP_READ);
      }
    })();
    yield* inflateChecked(pieces, limits, stats);
  } finally {
    await iterator.return?.(undefined);
  }
}

async function* guardReads(raw: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of raw) {
      yield Buffer.isBuffer(chunk)
        ? chunk
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    }
  } catch (error) {
    throw new ArchiveReadError(errnoOf(error), error);
  }
}

/** Gunzip with the compression-ratio check on every inflated chunk. */
async function* inflateChecked(
  compressed: AsyncIterable<Buffer>,
  limits: ArchiveLimits,
  stats: ByteStats,
): AsyncGenerator<Buffer> {
  const source = Readable.from(
    (async function* () {
      for await (const chunk of compressed) {
        stats.bytesRead += chunk.length;
        yield chunk;
      }
    })(),
    { objectMode: false },
  );
  const gunzip = createGunzip({ chunkSize: GZIP_OUT });
  source.on("error", (e) => gunzip.destroy(e));
  source.pipe(gunzip);
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      stats.bytesInflated += chunk.length;
      const ratio = stats.bytesInflated / Math.max(stats.bytesRead, 1);
      if (
        stats.bytesInflated > limits.compressionRatioGraceBytes &&
        ratio > limits.maxCompressionRatio
      ) {
        throw fatal(
          "compression_ratio",
          "",
          `compression ratio above ${limits.maxCompressionRatio}:1 (reading stopped after ${stats.bytesInflated} inflated bytes)`,
        );
      }
      yield chunk;
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (
      code === "Z_BUF_ERROR" ||
      /unexpected end of file/i.test(String((error as Error).message))
    ) {
      throw fatal("truncated_archive", "", "the gzip stream ends early");
    }
    if (typeof code === "string" && code.startsWith("Z_")) {
      throw fatal("malformed_archive", "", "the gzip stream is corrupt");
    }
    throw error;
  } finally {
    source.destroy();
    gunzip.destroy();
  }
}

/** Opens an archive file for reading; failures carry the errno, never the host path. */
export async function openArchive(file: string): Promise<FileHandle> {
  try {
    return await open(file, "r");
  } catch (error) {
    throw new ArchiveReadError(errnoOf(error));
  }
}

async function readAt(file: FileHandle, buffer: Buffer, position: number): Promise<number> {
  try {
    return (await file.read(buffer, 0, buffer.length, position)).bytesRead;
  } catch (error) {
    throw new ArchiveReadError(errnoOf(error));
  }
}

async function* readChunks(file: FileHandle, size: number): AsyncGenerator<Buffer> {
  for (let position = 0; ;) {
    const buffer = Buffer.allocUnsafe(size);
    const bytesRead = await readAt(file, buffer, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield bytesRead === size ? buffer : buffer.subarray(0, bytesRead);
  }
}
