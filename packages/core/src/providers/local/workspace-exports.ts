// The local provider's exports of a sandbox workspace: the full archive, the delta against the
// host's baseline, and the salvage export. Each one is a copyback try's read of the workspace,
// so a rehearsed export failure (export-faults.ts) fails any of them.
import type { Readable } from "node:stream";
import { exportWorkspaceArchive } from "../../copyback/archive/export";
import { exportSalvageArchive, SALVAGE_INFO_MESSAGE } from "../../copyback/archive/salvage";
import { DEFAULT_SPOOL_MEMORY_BYTES } from "../../copyback/archive/spool";
import { workspaceBytesAtLeast } from "../../copyback/archive/workspace-walk";
import { exportDeltaArchive } from "../../copyback/delta/export-delta";
import { compileExclude } from "../../copyback/manifest/exclude";
import type { DeltaExport, DeltaExportRequest, EnvironmentProvider, ExportOptions, ExportStream, LeaseHandle } from "../types";
import type { ExportFaults } from "./export-faults";
import { realWorkspace, type LocalSandboxes } from "./local-sandboxes";
import type { SandboxLayout } from "./sandbox-layout";
import { readStatCache, writeStatCache } from "./stat-cache";

export type WorkspaceExports = Required<Pick<EnvironmentProvider, "exportWorkspace" | "exportDelta" | "salvageExport">>;

function withAbort(stream: NodeJS.ReadableStream, signal?: AbortSignal): Readable {
  const readable = stream as Readable;
  if (signal) {
    const onAbort = () => readable.destroy(signal.reason instanceof Error ? signal.reason : new Error("The export was aborted."));
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener("abort", onAbort, { once: true });
      readable.once("close", () => signal.removeEventListener("abort", onAbort));
    }
  }
  return readable;
}

export function workspaceExports(sandboxes: LocalSandboxes, faults: ExportFaults): WorkspaceExports {
  /** The sandbox of a lease about to be exported, once this try's rehearsed failure (if any) is spent. */
  async function sandboxToExport(lease: LeaseHandle): Promise<SandboxLayout> {
    const { layout } = await sandboxes.open(lease);
    faults.failIfArmed(lease);
    await realWorkspace(layout);
    return layout;
  }

  async function exportWorkspace(lease: LeaseHandle, opts: ExportOptions = {}): Promise<Readable> {
    const { workspace } = await sandboxToExport(lease);
    // Excluded trees are neither exported nor validated; hard-linked files travel as ordinary
    // bytes (validation refuses hard-link entries), so only unsafe links need the salvage export.
    const exclude = opts.exclude ? [...opts.exclude] : undefined;
    // For a receive in this process (singleReceiver): a lower bound of the archive's size,
    // counted only up to the spool's memory bound, so a large one is spooled to disk from its
    // first byte (ExportStream.expectedBytes), and its buffers recycled once that receive is done.
    const expectedBytes = opts.singleReceiver === true ? await workspaceBytesAtLeast(workspace, compileExclude(exclude), DEFAULT_SPOOL_MEMORY_BYTES) : undefined;
    const archive = exportWorkspaceArchive(workspace, { exclude, hardLinks: "copy", recycleBuffers: opts.singleReceiver === true });
    const stream: ExportStream = withAbort(archive, opts.signal);
    if (expectedBytes !== undefined) stream.expectedBytes = expectedBytes;
    return stream;
  }

  /**
   * Capability `exportDelta`: the workspace scanned with the seed's stat cache (only files whose
   * stat changed are read), the entries that differ from the host's baseline sent as a tar with
   * the complete snapshot manifest; exclusions left out exactly as by exportWorkspace. A rehearsed
   * export failure fails it like any export (one per copyback try). The scan's newer cache is kept.
   */
  async function exportDelta(lease: LeaseHandle, request: DeltaExportRequest): Promise<DeltaExport> {
    const layout = await sandboxToExport(lease);
    const { cache, state } = await readStatCache(layout.statCacheFile);
    const delta = await exportDeltaArchive(layout.workspace, request.baseline, {
      ...(request.exclude ? { exclude: [...request.exclude] } : {}),
      ...(cache ? { cache } : {}),
    });
    // The scan returns the cache it was given when every record still held: nothing to write.
    // An accelerator only: a cache that cannot be written (a full disk) leaves the old one, whose
    // records still hold only while each file's stat does, and never fails the export.
    if (delta.cache !== cache) await writeStatCache(layout.statCacheFile, delta.cache).catch(() => undefined);
    return {
      manifest: delta.manifest,
      archive: delta.archive ? withAbort(delta.archive, request.signal) : null,
      report: { changed: delta.changed.length, removed: delta.removed.length, hashedFiles: delta.hashedFiles, hashedBytes: delta.hashedBytes, statCache: state },
    };
  }

  async function salvageExport(lease: LeaseHandle, opts: ExportOptions = {}): Promise<{ archive: Readable; message: string }> {
    const { workspace } = await sandboxToExport(lease);
    const archive = exportSalvageArchive(workspace, { exclude: opts.exclude ? [...opts.exclude] : undefined });
    return { archive: withAbort(archive, opts.signal), message: SALVAGE_INFO_MESSAGE };
  }

  return { exportWorkspace, exportDelta, salvageExport };
}
