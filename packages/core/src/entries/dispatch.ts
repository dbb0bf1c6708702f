// Claiming queued runs and executing one: what a worker loop (and the bench's pipeline) drives.
export { claimQueuedRuns } from "../dispatch/claim-runs";
export { Dispatcher } from "../dispatch/dispatcher";
export { executeRun } from "../dispatch/execute-run";
export type { ExecuteRunDeps } from "../dispatch/run-scope";
