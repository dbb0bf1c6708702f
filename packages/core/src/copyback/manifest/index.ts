export type { Manifest, ManifestEntry, ManifestEntryType, TakeManifestOptions } from "./types";
export { takeManifest, scanManifest, type ManifestScan } from "./take-manifest";
export { manifestsEqual, entriesEqual, indexManifest } from "./equal";
export { parseManifest, sealManifest } from "./parse";
export { compileExclude, type ExcludeMatcher } from "./exclude";
export { ManifestError, CopybackFsError, type ManifestErrorCode } from "./errors";
