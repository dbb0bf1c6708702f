// The removal of a copyback attempt's private staging directory (staging.ts). Once the merge is
// done it runs while the barrier and the commit are written (its rmdir calls wait on the
// filesystem's journal, the commit on the database), and it is joined before ownership is
// released (R-OWN-9: all of the copyback's work ends before the token goes).
import type { PrismaClient } from "@copyback/db/client";
import { recordRunEvent } from "../records/run-log";
import { errorCodeOf } from "../records/workspace-operations";
import { removeStagingDir } from "./staging";

export class StagingRemoval {
  private pending: Promise<void> | null = null;

  constructor(
    private readonly db: PrismaClient,
    private readonly run: { companyId: string; runId: string },
  ) {}

  /** Starts removing the directory; join() reads the outcome. */
  start(dir: string): void {
    const cleanup = removeStagingDir(dir);
    cleanup.catch(() => undefined); // observed at once; join reads its outcome
    this.pending = cleanup;
  }

  /** The removal started last, awaited; a removal that fails is reported, never the copyback's failure. */
  async join(): Promise<void> {
    const cleanup = this.pending;
    this.pending = null;
    if (cleanup === null) return;
    try {
      await cleanup;
    } catch (error) {
      // Private files of this attempt only: the host and the records are unaffected. The
      // leftover-staging sweep removes it once the run's coordinator settled.
      await recordRunEvent(this.db, {
        companyId: this.run.companyId,
        runId: this.run.runId,
        level: "warn",
        code: "workspace.staging_cleanup_failed",
        message: "The copyback's private staging directory could not be removed.",
        payload: { errorCode: errorCodeOf(error, "staging_cleanup_failed") },
      }).catch(() => undefined);
    }
  }
}
