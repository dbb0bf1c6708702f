// The audit row of a change, committed with the change itself: one writer for web and worker
// lives in core (packages/core/src/records/record-activity.ts).
export { recordActivity, type ActivityEntry } from "@copyback/core/records";
