// One copyback try's export: the delta export when the lease's plugin offers it, the
// full export (export-snapshot.ts) otherwise, and the full export in the same try when the host
// refuses the delta (delta-policy.ts: provider_delta_mismatch, an unsafe or malformed manifest).
// A delta that fails because the sandbox or the transfer failed fails the try like any export
// (R-RR-1 retries it; the next try asks for a delta again). Each export has its own deadline
// (export-deadline.ts), so a delta that used up its time still leaves the full export its own.
// The path taken is logged for every try (`workspace.exported`: delta or full, bytes, entries) and
// a fallback with its reason code (`workspace.delta_fallback`), never with a path (R-UA-4).
// Against an empty baseline the full export runs at once (delta-policy.ts deltaCanSave).
// Exclusions reach both exports alike: excluded trees are neither exported nor compared.
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Prisma } from "@copyback/db/client";
import type { Manifest } from "../copyback/manifest/types";
import { hasCapability } from "../providers/registry";
import type { EnvironmentProvider, LeaseHandle } from "../providers/types";
import { decideDeltaFailure, deltaCanSave } from "./delta-policy";
import { withExportDeadline } from "./export-deadline";
import { exportDeltaSnapshot } from "./export-delta-snapshot";
import { exportSnapshot, type ExportedSnapshot } from "./export-snapshot";

/** What the run log and the operation record say about the export of one try. */
export type ExportReport =
  | { path: "delta"; bytes: number; archiveBytes: number; entries: number; changed: number; removed: number; hashedFiles: number; statCache: string }
  | { path: "full"; bytes: number; entries: number; fallbackFrom: string | null; deltaSkipped?: "empty_baseline" };

export type MergeableExport = ExportedSnapshot & { report: ExportReport | null };

export interface ExportForMergeInput {
  plugin: EnvironmentProvider;
  lease: LeaseHandle;
  /** A private, existing, empty directory of this try (removed by the caller). */
  workDir: string;
  baseline: Manifest;
  exclude?: readonly string[];
  /** Each export's deadline (export-deadline.ts); none when absent (the legacy copy-back has none). */
  timeoutMs?: number;
  /** Run-log writer of the caller (the try's identifiers are the caller's). */
  log(level: "info" | "warn", code: string, message: string, payload: Prisma.InputJsonObject): Promise<void>;
}

export async function exportForMerge(input: ExportForMergeInput): Promise<MergeableExport> {
  let fallbackFrom: string | null = null;
  const deltaCapable = hasCapability(input.plugin, "exportDelta");
  const skipped = deltaCapable && !deltaCanSave(input.baseline);
  if (deltaCapable && !skipped) {
    const deltaDir = join(input.workDir, "delta");
    await mkdir(deltaDir, { mode: 0o700 });
    try {
      const delta = await within(input.timeoutMs, (signal) =>
        exportDeltaSnapshot({ plugin: input.plugin, lease: input.lease, workDir: deltaDir, baseline: input.baseline, exclude: input.exclude, signal }),
      );
      const report: ExportReport = {
        path: "delta",
        bytes: delta.bytes,
        archiveBytes: delta.archiveBytes,
        entries: delta.changed,
        changed: delta.changed,
        removed: delta.removed,
        hashedFiles: delta.report.hashedFiles,
        statCache: delta.report.statCache,
      };
      await input.log("info", "workspace.exported", `Exported the sandbox's changes (delta): ${delta.changed} changed, ${delta.removed} removed, ${delta.bytes} file bytes (${delta.archiveBytes} archive bytes).`, report);
      return { kind: "extracted", snapshotDir: delta.snapshotDir, snapshotManifest: delta.snapshotManifest, stage: "primary", entries: delta.changed, bytes: delta.bytes, report };
    } catch (error) {
      const decision = decideDeltaFailure(error);
      if (decision.kind === "fail_try") throw error;
      fallbackFrom = decision.code;
      // Whatever the refused delta left in staging goes before the full export starts.
      await rm(deltaDir, { recursive: true, force: true });
      await input.log("warn", "workspace.delta_fallback", `The delta export was refused (${decision.code}); exporting the whole workspace instead, in the same try.`, { reason: decision.code });
    }
  }
  const full = await within(input.timeoutMs, (signal) =>
    exportSnapshot({
      plugin: input.plugin,
      lease: input.lease,
      workDir: input.workDir,
      signal,
      exclude: input.exclude,
      info: (code, message) => input.log("info", code, message, {}),
    }),
  );
  if (full.kind === "omitted") return { ...full, report: null };
  const report: ExportReport = { path: "full", bytes: full.bytes, entries: full.entries, fallbackFrom, ...(skipped ? { deltaSkipped: "empty_baseline" as const } : {}) };
  await input.log("info", "workspace.exported", `Exported the whole sandbox workspace (full): ${full.entries} entries, ${full.bytes} file bytes.`, report);
  return { ...full, report };
}

function within<T>(timeoutMs: number | undefined, work: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  return timeoutMs === undefined ? work(undefined) : withExportDeadline(timeoutMs, work);
}
