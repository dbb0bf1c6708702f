// The host side of a delta export (capability `exportDelta`, copyback/delta): ask the lease's
// pinned plugin for the entries that differ from the prepared baseline, spool the delta archive
// into this try's private directory (capped at what the manifest says the changed entries can
// take: a sandbox cannot fill the instance root through a delta), then receiveDeltaArchive: the
// manifest parsed once, the delta computed from the host's own baseline, the whole manifest tree
// checked with the archive policy (R-UA-2), the archive validated and extracted into the empty
// staging directory and compared entry by entry with the manifest. Any disagreement throws
// (provider_delta_mismatch); the caller decides what a failure means (delta-policy.ts). The
// staging directory then holds exactly the changed entries, and the merge gets the complete
// snapshot manifest (R-LK-6: it still compares every path, type, hash, mode and link target).
import { constants, createWriteStream } from "node:fs";
import { mkdir, open, rm } from "node:fs/promises";
import { join } from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { deltaArchivePaths } from "../copyback/delta/diff";
import { DeltaMismatchError } from "../copyback/delta/errors";
import { prepareDeltaReceipt, receivePreparedDelta } from "../copyback/delta/receive";
import type { Manifest } from "../copyback/manifest/types";
import { requireCapability } from "../providers/registry";
import type { DeltaExport, EnvironmentProvider, LeaseHandle } from "../providers/types";
import { untilAborted } from "./export-deadline";

export interface DeltaSnapshot {
  kind: "extracted";
  snapshotDir: string;
  snapshotManifest: Manifest;
  /** Entries the host found changed (carried in the archive) and removed (known from the manifest). */
  changed: number;
  removed: number;
  /** Sum of the changed files' sizes (what the full export calls bytes). */
  bytes: number;
  /** Tar bytes received (0: nothing changed, no archive). */
  archiveBytes: number;
  /** What the sandbox side said about its scan (run log only). */
  report: DeltaExport["report"];
}

export interface ExportDeltaSnapshotInput {
  plugin: EnvironmentProvider;
  lease: LeaseHandle;
  /** A private, existing, empty directory (removed by the caller). */
  workDir: string;
  baseline: Manifest;
  exclude?: readonly string[];
  signal?: AbortSignal;
}

/** Tar framing a delta archive may add around its file bytes: headers, long names, padding. */
const ENTRY_OVERHEAD_BYTES = 8 * 1024;
const ARCHIVE_OVERHEAD_BYTES = 64 * 1024;

export async function exportDeltaSnapshot(input: ExportDeltaSnapshotInput): Promise<DeltaSnapshot> {
  requireCapability(input.plugin, "exportDelta"); // R-EX-6: the registry's one capability rule
  const exportDelta = (input.plugin.exportDelta as NonNullable<EnvironmentProvider["exportDelta"]>).bind(input.plugin);
  const exclude = input.exclude ? [...input.exclude] : [];
  const delta = await untilAborted(exportDelta(input.lease, { baseline: input.baseline, exclude, signal: input.signal }), input.signal, (late) => late.archive?.destroy());
  try {
    // Parsed and compared with the host's own baseline once, here: the spool's cap needs the
    // changed entries before the archive is read, and the receive reuses the same result.
    const prepared = prepareDeltaReceipt({ manifest: delta.manifest, baseline: input.baseline, exclude });
    const { changed } = prepared;
    const snapshotDir = join(input.workDir, "snapshot");
    await mkdir(snapshotDir, { mode: 0o700 });
    let archiveFile: string | null = null;
    let archiveBytes = 0;
    const bytes = changed.reduce((sum, e) => sum + (e.size ?? 0), 0);
    if (delta.archive) {
      const cap = bytes + deltaArchivePaths(changed).length * ENTRY_OVERHEAD_BYTES + ARCHIVE_OVERHEAD_BYTES;
      archiveFile = join(input.workDir, "delta.tar");
      archiveBytes = await spool(delta.archive, archiveFile, cap, input.signal);
    }
    try {
      const receipt = await receivePreparedDelta(prepared, { archive: archiveFile, stagingDir: snapshotDir });
      return { kind: "extracted", snapshotDir, snapshotManifest: receipt.snapshotManifest, changed: receipt.changed.length, removed: receipt.removed.length, bytes, archiveBytes, report: delta.report };
    } finally {
      // A transfer artifact: gone before the merge's durability barrier flushes it for nothing.
      if (archiveFile) await rm(archiveFile, { force: true });
    }
  } finally {
    delta.archive?.destroy();
  }
}

/** The archive into a new private file, refused once it passes `cap` bytes; the byte count. */
async function spool(archive: Readable, file: string, cap: number, signal: AbortSignal | undefined): Promise<number> {
  const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > cap) done(new DeltaMismatchError("", "the archive is larger than the changed entries it may carry"));
      else done(null, chunk);
    },
  });
  try {
    await pipeline(archive, counter, createWriteStream("", { fd: handle.fd, autoClose: false }), ...(signal ? [{ signal }] : []));
  } finally {
    await handle.close();
  }
  return bytes;
}
