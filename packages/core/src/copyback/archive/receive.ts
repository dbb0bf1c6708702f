// receiveWorkspaceArchive: the host side of a full copyback in one pass over the transfer.
//   1. The archive stream is validated while it arrives (the same inspection as
//      validateArchive: strict tar framing and limits, path and tree policy, symlink
//      resolution, node-tar's reading cross-checked) and its tar bytes are kept in a spool
//      (spool.ts: memory, or an unlinked private file above 256 MiB, whose bytes the validator
//      then reads back from the file).
//   2. Rejected: the spool is dropped and the violations returned; the staging directory was
//      never written (R-UA-2, R-UA-4: not even partly).
//   3. Safe: the entries are written from the spool into the empty staging directory at the
//      body offsets the validator recorded (no second parse), each file hashed as it is
//      written; symlinks last, directory modes after. The result carries the snapshot's
//      manifest, so the merge does not read the tree again:
//        mergeSnapshot({ snapshotDir: stagingDir, snapshotManifest, consumeSnapshot: true })
// Any failure after the first write empties the staging directory again.
import { performance } from "node:perf_hooks";
import { ArchiveExtractionError, ArchiveReadError } from "./errors";
import { errnoOf } from "../../errors";
import { streamArchiveBytes, type ByteStats } from "./archive-bytes";
import {
  applyDirectoryModes,
  assertEmptyDirectory,
  createSymlinks,
  emptyDirectory,
} from "./extract";
import { resolveLimits, type ArchiveLimits } from "./limits";
import { ArchiveSpool, type SpoolOptions } from "./spool";
import { streamChunks } from "./stream-chunks";
import { inspectTarBytes } from "./validate";
import type { ArchiveViolation } from "./violations";
import { writeSpooledEntries } from "./write-spooled";
import { sealManifest } from "../manifest/parse";
import type { Manifest } from "../manifest/types";

export interface ReceiveWorkspaceArchiveOptions extends SpoolOptions {
  /** The archive as it arrives (tar, or gzip-compressed tar): an export or transfer stream. */
  archive: AsyncIterable<Uint8Array> | NodeJS.ReadableStream;
  /** An existing, empty directory (private staging: the merge may consume it). */
  stagingDir: string;
  limits?: Partial<ArchiveLimits>;
  /** Threads writing the extracted files (default: the CPUs available, at most 4). */
  writers?: number;
}

export type ReceivedWorkspaceArchive =
  | {
      kind: "safe";
      /** Entries extracted (the archive root not counted). */
      entries: number;
      /** Sum of the regular files' sizes. */
      totalBytes: number;
      /** Exactly what staging now holds (paths, types, modes, sha256, sizes, link targets). */
      snapshotManifest: Manifest;
      /** Tar bytes received, and whether they spilled from memory to a temporary file. */
      spool: { bytes: number; spilled: boolean };
      /** Wall time receiving and validating, then extracting (for diagnostics and benchmarks). */
      phases: { receiveMs: number; extractMs: number };
    }
  | { kind: "rejected"; violations: ArchiveViolation[] };

export async function receiveWorkspaceArchive(
  opts: ReceiveWorkspaceArchiveOptions,
): Promise<ReceivedWorkspaceArchive> {
  const started = performance.now();
  const limits = resolveLimits(opts.limits);
  // Refused before a byte is read: the caller's mistake, not the archive's.
  await assertEmptyDirectory(opts.stagingDir);
  const spool = new ArchiveSpool(opts);
  const stats: ByteStats = { gzip: false, bytesRead: 0, bytesInflated: 0 };
  try {
    const incoming = streamArchiveBytes(streamChunks(opts.archive), limits, stats);
    const inspection = await inspectTarBytes(spooled(incoming, spool), limits, stats);
    if (inspection.validation.kind === "rejected") {
      destroyQuietly(opts.archive);
      return inspection.validation;
    }
    const safe = inspection.validation;
    const validated = performance.now();
    const dest = await assertEmptyDirectory(opts.stagingDir);
    try {
      // Checked and frozen in place (no copy of 200,000 entries): the merge takes it as parsed.
      const snapshotManifest = sealManifest(
        await writeSpooledEntries(spool, dest, inspection.entries, { writers: opts.writers }),
      );
      const entries = inspection.entries.filter((e) => e.kind !== "root");
      await createSymlinks(dest, entries);
      await applyDirectoryModes(dest, entries);
      return {
        kind: "safe",
        entries: safe.entries,
        totalBytes: safe.totalBytes,
        snapshotManifest,
        spool: { bytes: spool.length, spilled: spool.spilled },
        phases: { receiveMs: validated - started, extractMs: performance.now() - validated },
      };
    } catch (error) {
      await emptyDirectory(dest);
      if (error instanceof ArchiveExtractionError) throw error;
      throw new ArchiveExtractionError("could not write the extracted files", errnoOf(error));
    }
  } catch (error) {
    destroyQuietly(opts.archive);
    throw error;
  } finally {
    spool.close();
  }
}

/** Passes the tar bytes on to the validator, keeping each one in the spool first (R-UA-2). */
async function* spooled(
  source: AsyncIterable<Buffer>,
  spool: ArchiveSpool,
): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    let kept: Uint8Array;
    try {
      // What the spool will give extraction: the chunk itself, or once spilled its bytes read
      // back from the file (the chunk may then be recycled at once).
      kept = await spool.append(chunk);
    } catch (error) {
      throw new ArchiveReadError(errnoOf(error), error);
    }
    yield Buffer.isBuffer(kept) ? kept : Buffer.from(kept.buffer, kept.byteOffset, kept.length);
  }
}

/** A stream we stopped reading is destroyed, so its producer (an export, a socket) stops too. */
function destroyQuietly(archive: ReceiveWorkspaceArchiveOptions["archive"]): void {
  const stream = archive as { destroy?: () => void };
  if (typeof stream.destroy === "function") stream.destroy();
}
