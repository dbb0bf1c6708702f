// The physical export of a sandbox workspace into a private staging directory, applying the
// export policy (export-policy.ts): extract a safe archive, ask for one salvage export after a
// rejection, omit the export when the salvage is rejected too. Rejected archives are discarded
// at once and never extracted, not even partly (R-UA-4: extraction validates first and writes
// nothing of a rejected archive).
import { createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { UnsafeArchiveError } from "../copyback/archive/errors";
import { extractValidatedArchive } from "../copyback/archive/extract";
import { hasCapability } from "../leases/plugin-for-lease";
import { requireCapability } from "../providers/registry";
import type { EnvironmentProvider, LeaseHandle } from "../providers/types";
import { untilAborted } from "./export-deadline";
import { decideExport, salvageLogMessage, type ExportStage } from "./export-policy";

export type ExportedSnapshot =
  | { kind: "extracted"; snapshotDir: string; stage: ExportStage; entries: number; bytes: number }
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
  let archive: Readable = await untilAborted(exportWorkspace(lease, { signal: input.signal }), input.signal, discardStream);
  const violationCodes = new Set<string>();
  for (;;) {
    const file = join(input.workDir, `${stage}.tar`);
    await pipeline(archive, createWriteStream(file, { mode: 0o600, flags: "wx" }), { signal: input.signal });
    let verdict: "safe" | "rejected";
    let extracted: { entries: number; totalBytes: number } | null = null;
    try {
      extracted = await extractValidatedArchive(file, snapshotDir);
      verdict = "safe";
    } catch (error) {
      if (!(error instanceof UnsafeArchiveError)) throw error;
      for (const v of error.violations) violationCodes.add(v.code);
      verdict = "rejected";
    } finally {
      // The snapshot directory holds the files now; a rejected archive is discarded unread.
      await rm(file, { force: true });
    }
    const decision = decideExport({ stage, verdict, salvageAvailable: salvageExport !== undefined });
    if (decision.kind === "extract" && extracted) {
      return { kind: "extracted", snapshotDir, stage, entries: extracted.entries, bytes: extracted.totalBytes };
    }
    if (decision.kind === "salvage" && salvageExport) {
      const salvage = await untilAborted(salvageExport(lease, { signal: input.signal }), input.signal, (late) => discardStream(late.archive));
      // R-UA-2: the provider's fixed informational message, never a path or link target.
      await input.info("workspace.export_salvaged", salvageLogMessage(salvage.message));
      archive = salvage.archive;
      stage = "salvage";
      continue;
    }
    return { kind: "omitted", salvageTried: stage === "salvage", violationCodes: [...violationCodes].sort() };
  }
}

/** A stream the provider handed over after the caller gave up on it. */
function discardStream(stream: Readable): void {
  stream.destroy();
}

