import { getAgentOutput } from "./agent-output";
import { getRunFinalization } from "./finalization";
import { getRun } from "./get";
import { getLatestRunForIssue } from "./latest-for-issue";
import { listRunsForIssue } from "./list-for-issue";
import { retryRunProcedure } from "./retry";
import { stopRunProcedure } from "./stop";
import { getRunWorkspace } from "./workspace";

export const runsRouter = {
  get: getRun,
  listForIssue: listRunsForIssue,
  latestForIssue: getLatestRunForIssue,
  finalization: getRunFinalization,
  workspace: getRunWorkspace,
  agentOutput: getAgentOutput,
  stop: stopRunProcedure,
  retry: retryRunProcedure,
};
