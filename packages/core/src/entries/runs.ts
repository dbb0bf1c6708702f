// Runs: wake and assign an agent, post a message, publish a result, Stop, retry, the agent key.
export { postIssueMessage } from "../runs/post-message";
export { publishRunResult } from "../runs/publish-result";
export { retryRun } from "../runs/retry-run";
export { mintRunAgentKey, revokeRunAgentKeys } from "../runs/run-agent-key";
export { stopRun } from "../runs/stop-run";
export { assignAgent, wakeAgent } from "../runs/wake-agent";
