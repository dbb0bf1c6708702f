import { getRunFinalization } from "./finalization";
import { getRun } from "./get";
import { listRunsForIssue } from "./list-for-issue";

export const runsRouter = {
  get: getRun,
  listForIssue: listRunsForIssue,
  finalization: getRunFinalization,
};
