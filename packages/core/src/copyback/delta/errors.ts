// Errors of the delta copyback. The code starts with "provider_" on purpose: an export whose
// archive and manifest disagree is a provider failure before any host write, which R-RR-1
// retries (classifyCopybackFailure); nothing of it ever reaches the host.

export class DeltaMismatchError extends Error {
  override readonly name = "DeltaMismatchError";
  readonly code = "provider_delta_mismatch" as const;
  /** Workspace-relative path of the first disagreement ("" for the export as a whole). */
  readonly path: string;
  constructor(path: string, reason: string) {
    super(
      `The delta export does not match its manifest${path ? ` at ${JSON.stringify(path)}` : ""}: ${reason}`,
    );
    this.path = path;
  }
}
