// The recovery-action ledger: the one writer of issue_recovery_actions (DESIGN.md section 8), and
// its entry point. Finalization, runs and recovery call it in their own transactions. Each cause's
// evidence schema, reader and opener live in actions/ in a file named for the cause; every
// board-owned action opens through actions/open-board-action.ts (idempotent by company, issue,
// cause and fingerprint, R-OWN-5), and "open" means actions/open-statuses.ts's statuses. The
// export-only retry's writes are actions-export-retry.ts.
export * from "./actions/open-statuses";
export * from "./actions/open-statuses-sql";
export type { OpenOutcome } from "./actions/open-board-action";
export * from "./actions/owner-unverified";
export * from "./actions/owner-unverified-cleanup";
export * from "./actions/files-given-up";
export * from "./actions/export-retry-exhausted";
export * from "./actions/file-recovery";
export * from "./actions/legacy-copyback-repair";
export * from "./actions/export-limit";
export * from "./actions/copyback-failed";
export * from "./actions/pack-verification-unavailable";
export * from "./actions/resolution";
