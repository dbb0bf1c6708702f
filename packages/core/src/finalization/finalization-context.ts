// A finalization as its owner: what every step of finalizeRun shares (its dependencies, the run's
// key, the ownership it holds, the clock) and the writes they all make the same way: a
// transaction checked as this owner (R-OWN-9), a run event of this run, the run's failure beside
// its terminal coordinator.
import { withTransaction, type Prisma, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import type { CopybackRetryOptions } from "../copyback/merge/retries";
import type { MergeLockProvider } from "../copyback/merge/types";
import type { ControllerPlatformIdentity } from "../platforms/platform-identity";
import type { ProcessIdentity } from "../process/process-identity";
import type { EnvironmentProvider } from "../providers/types";
import { supersedeOwnerHoldsOnTerminalFailure } from "../records/actions";
import type { RunEventEntry } from "../records/run-log";
import { failRunInTransaction } from "../runs/settle-run";
import type { FinalizationOwnership, OwnershipKey } from "./finalization-owner";
import { StagingRemoval } from "./staging-removal";

/** What finalizeRun needs from the provider registry (ProviderRegistry fits as is). */
export interface ProviderLookup {
  forLease(lease: { pluginId: string; provider: string }): EnvironmentProvider;
}

export interface FinalizeRunDeps {
  db: PrismaClient;
  registry: ProviderLookup;
  instanceRoot: string;
  /** Directory-merge locks of this instance (copyback/locks DirectoryMergeLocks). */
  locks: MergeLockProvider;
  /** The application database, for the dedicated ownership connection (R-OWN-6). */
  databaseUrl: string;
  /** This controller process (R-OWN-7); read from /proc when omitted. */
  controller?: ProcessIdentity;
  /** R-RW-1: the platform deployment this controller runs in (detectControllerPlatform); absent off any platform. */
  platform?: ControllerPlatformIdentity;
  /** Issue 23: this controller's host id (deployment/host-id.ts); another host's local sandbox is never resumed here. */
  hostId?: string;
  now?: () => Date;
  /** Backoff of the in-process retries (tests pass a zero backoff). */
  retry?: Pick<CopybackRetryOptions, "backoffMs" | "sleep">;
  /**
   * How long one copyback try may spend exporting (provider calls and stream) before it is
   * aborted as a transient provider failure (export-deadline.ts); default 10 minutes.
   */
  exportTimeoutMs?: number;
}

export class OwnedFinalization {
  readonly now: () => Date;
  /** The removal of the current attempt's staging while its outcome is written (copyback-attempt.ts). */
  readonly staging: StagingRemoval;

  constructor(
    readonly deps: FinalizeRunDeps,
    readonly key: OwnershipKey,
    readonly ownership: FinalizationOwnership,
    readonly exportTimeoutMs: number,
  ) {
    this.now = deps.now ?? (() => new Date());
    this.staging = new StagingRemoval(deps.db, key);
  }

  /** A coordinator write made while owning: ownership is checked in the same transaction (R-OWN-9). */
  owned<T>(fn: (tx: TransactionClient) => Promise<T>): Promise<T> {
    return withTransaction(this.deps.db, async (tx) => {
      await this.ownership.assertPublishable(tx);
      return fn(tx);
    });
  }

  /** A terminal coordinator ends its run in the same transaction: failed, code kept, task through the arbiter. */
  /** The owner's terminal failure, after its own hold opened in `tx`: earlier owners' holds close with it. */
  async endRunFailed(tx: TransactionClient, code: string, message: string): Promise<void> {
    await supersedeOwnerHoldsOnTerminalFailure(tx, { companyId: this.key.companyId, runId: this.key.runId });
    await failRunInTransaction(tx, { runId: this.key.runId, code, message });
  }

  event(level: RunEventEntry["level"], code: string, message: string, payload: Prisma.InputJsonObject): RunEventEntry {
    return { companyId: this.key.companyId, runId: this.key.runId, level, code, message, payload };
  }
}
