import { addIssueMessage } from "./add-message";
import { assignIssueAgent } from "./assign-agent";
import { listIssueAttachments } from "./attachments";
import { getIssue } from "./get";
import { listIssues } from "./list";
import { listIssueMessages } from "./messages";
import { updateIssueStatus } from "./update-status";
import { wakeIssueAgent } from "./wake";

export const issuesRouter = {
  list: listIssues,
  get: getIssue,
  messages: listIssueMessages,
  attachments: listIssueAttachments,
  addMessage: addIssueMessage,
  updateStatus: updateIssueStatus,
  assignAgent: assignIssueAgent,
  wake: wakeIssueAgent,
};
