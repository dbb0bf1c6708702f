// The operator's retained sandboxes: listing them and Discard (with its refusals).
export type { DiscardRefusal } from "../sandboxes/decide-discard";
export { discardRetainedSandbox } from "../sandboxes/discard-sandbox";
export { listRetainedSandboxes } from "../sandboxes/list-retained";
