// The physical export of a sandbox workspace into a private staging directory, applying the
// export policy (export-policy.ts): extract a safe archive, ask for one salvage export after a
// rejection for unsafe entries, omit the export when the salvage is rejected too; a truncated
// stream fails the try as a transport failure (ArchiveTruncatedError, retried: R-RR-1) and an
// archive over a limit fails it for good (ArchiveLimitError). The workspace's exclusions go to
// the provider: excluded trees are neither exported nor validated, so they can neither force a
// salvage nor push an archive over a limit. Rejected archives are discarded
// at once and never extracted, not even partly (R-UA-4: receiveWorkspaceArchive validates the
// whole stream as it arrives and writes nothing of a rejected archive). The one-pass receive also
// hashes what it writes, so the merge gets the snapshot's manifest without reading staging again.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { ArchiveLimitError, ArchiveTruncatedError } from "../copyback/archive/errors";
import { receiveWorkspaceArchive } from "../copyback/archive/receive";
import type { Manifest } from "../copyback/manifest/types";
import { hasCapability, requireCapability } from "../providers/registry";
import type { EnvironmentProvider, ExportStream, LeaseHandle } from "../providers/types";
import { untilAborted } from "./export-deadline";
import { decideExport, salvageLogMessage, type ExportStage } from "./export-policy";

export type ExportedSnapshot =
  | { kind: "extracted"; snapshotDir: string; snapshotManifest: Manifest; stage: ExportStage; entries: number; bytes: number }
  | { kind: "omitted"; salvageTried: boolean; violationCodes: string[] };

export interface ExportSnapshotInput {
  plugin: EnvironmentProvider;
  lease: LeaseHandle;
  /** A private, existing, empty directory of this attempt (removed by the caller). */
  workDir: string;
  /** Informational messages for the run log (salvage used). Never given a path. */
  info(code: string, message: string): Promise<void>;
  /** Aborts the provider calls and the stream consumption (the export deadline, export-deadline.ts). */
  signal?: AbortSignal;
  /**
   * The workspace's exclusions (the prepared descriptor's excludedPaths, manifest/exclude.ts
   * syntax): what the merge leaves alone is not exported either.
   */
  exclude?: readonly string[];
}

export async function exportSnapshot(input: ExportSnapshotInput): Promise<ExportedSnapshot> {
  const { plugin, lease } = input;
  requireCapability(plugin, "exportWorkspace"); // R-EX-6: the registry's one capability rule
  const exportWorkspace = (plugin.exportWorkspace as NonNullable<EnvironmentProvider["exportWorkspace"]>).bind(plugin);
  // R-UA-2: a salvage export only from a plugin that advertises and implements it.
  const salvageExport = hasCapability(plugin, "salvageExport") ? plugin.salvageExport.bind(plugin) : undefined;
  const snapshotDir = join(input.workDir, "snapshot");
  await mkdir(snapshotDir, { mode: 0o700 });

  let stage: ExportStage = "primary";
  // singleReceiver: the stream goes into receiveWorkspaceArchive below and nowhere else.
  const options = { signal: input.signal, exclude: input.exclude ? [...input.exclude] : [], singleReceiver: true };
  let archive: Readable = await untilAborted(exportWorkspace(lease, options), input.signal, discardStream);
  const violationCodes = new Set<string>();
  for (;;) {
    const received = await receiveWorkspaceArchive({
      archive: abortable(archive, input.signal),
      stagingDir: snapshotDir,
      // A large archive spills into this attempt's private directory, removed with it; from its
      // first byte when the provider knows it is that large (ExportStream.expectedBytes).
      spillDirectory: input.workDir,
      expectedBytes: (archive as ExportStream).expectedBytes,
    });
    const violations = received.kind === "rejected" ? received.violations : [];
    for (const v of violations) violationCodes.add(v.code);
    const decision = decideExport({ stage, verdict: received.kind, violations, salvageAvailable: salvageExport !== undefined });
    if (decision.kind === "extract" && received.kind === "safe") {
      return {
        kind: "extracted",
        snapshotDir,
        snapshotManifest: received.snapshotManifest,
        stage,
        entries: received.entries,
        bytes: received.totalBytes,
      };
    }
    // Nothing of a rejected archive was written; these end the try before any host write.
    if (decision.kind === "transport_failure") throw new ArchiveTruncatedError(violations);
    if (decision.kind === "limit_failure") throw new ArchiveLimitError(decision.violations);
    if (decision.kind === "salvage" && salvageExport) {
      const salvage = await untilAborted(salvageExport(lease, options), input.signal, (late) => discardStream(late.archive));
      // R-UA-2: the provider's fixed informational message, never a path or link target.
      await input.info("workspace.export_salvaged", salvageLogMessage(salvage.message));
      archive = salvage.archive;
      stage = "salvage";
      continue;
    }
    return { kind: "omitted", salvageTried: stage === "salvage", violationCodes: [...violationCodes].sort() };
  }
}

/**
 * The export deadline reaches the stream too: an abort destroys it with the deadline's reason, so
 * a transfer that stalls mid-archive fails the receive instead of holding the locks.
 */
function abortable(stream: Readable, signal: AbortSignal | undefined): Readable {
  if (!signal) return stream;
  const onAbort = () => stream.destroy(signal.reason instanceof Error ? signal.reason : new Error("export aborted"));
  if (signal.aborted) onAbort();
  else {
    signal.addEventListener("abort", onAbort, { once: true });
    stream.once("close", () => signal.removeEventListener("abort", onAbort));
  }
  return stream;
}

/** A stream the provider handed over after the caller gave up on it. */
function discardStream(stream: Readable): void {
  stream.destroy();
}

