import { addIssueMessage } from "./add-message";
import { getIssue } from "./get";
import { listIssues } from "./list";
import { listIssueMessages } from "./messages";
import { updateIssueStatus } from "./update-status";

export const issuesRouter = {
  list: listIssues,
  get: getIssue,
  messages: listIssueMessages,
  addMessage: addIssueMessage,
  updateStatus: updateIssueStatus,
};
