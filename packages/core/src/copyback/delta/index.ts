// Delta copyback: export only what changed (with the complete snapshot manifest), receive and
// verify it on the host, then mergeSnapshot({ snapshotDir, snapshotManifest }).
export type {
  CachedFileStat,
  DeltaExport,
  DeltaReceipt,
  WorkspaceScan,
  WorkspaceStatCache,
} from "./types";
export { scanWorkspace, type ScanOptions } from "./scan";
export { diffManifests, deltaArchivePaths, type ManifestDelta } from "./diff";
export { exportDeltaArchive, type DeltaExportOptions } from "./export-delta";
export { prepareDeltaReceipt, receiveDeltaArchive, receivePreparedDelta, type PreparedDelta, type ReceiveDeltaOptions } from "./receive";
export { checkManifestTree } from "./tree-check";
export { DeltaMismatchError } from "./errors";
