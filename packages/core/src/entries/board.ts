// The board's own rules and a task's stored attachments, for the web app's routers and handlers.
export { attachmentContentPath } from "../attachments/content-path";
export { DEFAULT_MAX_ATTACHMENT_BYTES } from "../attachments/limits";
export { listAttachments, readAttachment } from "../attachments/read-attachment";
export { attachmentTooLarge, storeAttachment } from "../attachments/store-attachment";
export { requireIssueInCompany } from "../board/issue-in-company";
export { updateIssueStatus } from "../board/issue-status-update";
export { applyMembershipChange } from "../board/membership-change";
