// What happens to an exported archive (R-UA-2, R-UA-3, R-UA-4), as pure decisions. One policy
// for the live path and the restart finalizer (R-UA-4):
//   primary export safe            -> extract it
//   primary export rejected        -> ask the provider for one salvage export (if it can make one)
//   salvage export safe            -> extract it
//   salvage rejected / no salvage  -> omit: discard the export, log `workspace_export_omitted` at
//                                     info, and complete with the accepted result (R-UA-3: no
//                                     warning, no recovery action, no provider turn)
// An archive is never extracted before it was validated (R-UA-4); extraction itself validates
// first (copyback/archive/extract.ts), so "rejected" is what it reports.
import { SALVAGE_INFO_MESSAGE } from "../copyback/archive/salvage";

export type ExportStage = "primary" | "salvage";

export type ExportDecision = { kind: "extract" } | { kind: "salvage" } | { kind: "omit" };

export interface ExportVerdict {
  stage: ExportStage;
  verdict: "safe" | "rejected";
  /** The plugin advertises `salvageExport`. */
  salvageAvailable: boolean;
}

export function decideExport(input: ExportVerdict): ExportDecision {
  if (input.verdict === "safe") return { kind: "extract" };
  // R-UA-2: exactly one salvage export, and only after the primary one was rejected.
  if (input.stage === "primary" && input.salvageAvailable) return { kind: "salvage" };
  return { kind: "omit" };
}

/** At most this long, one line: a provider's informational message, not a report. */
const MAX_PROVIDER_MESSAGE = 200;

/**
 * The message that goes to the run log when a salvage export was used (R-UA-2). The provider's
 * fixed message when it is short, one line and names no path (R-UA-4: no host path or link
 * target may reach the informational event); the engine's fixed message otherwise.
 */
export function salvageLogMessage(providerMessage: string): string {
  const message = providerMessage.trim();
  const safe =
    message.length > 0 &&
    message.length <= MAX_PROVIDER_MESSAGE &&
    !/[\r\n\0/\\]/.test(message) &&
    !/\.\./.test(message);
  return safe ? message : SALVAGE_INFO_MESSAGE;
}

/** The fixed text of the `workspace_export_omitted` run event (no path, no link target). */
export const EXPORT_OMITTED_MESSAGE =
  "The workspace export was still unsafe after the salvage export; it was discarded and the accepted result was kept.";
