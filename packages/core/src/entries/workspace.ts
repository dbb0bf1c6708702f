// A host workspace's path history: which committed runs wrote or deleted a path.
export { workspacePathHistory } from "../workspace/path-history";
// Issue 23: the audited move of a workspace to another host.
export { moveWorkspaceHost, type MoveWorkspaceHostInput, type MoveWorkspaceHostResult } from "../workspace/move-workspace-host";
