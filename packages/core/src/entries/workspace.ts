// A host workspace's path history: which committed runs wrote or deleted a path.
export { workspacePathHistory } from "../workspace/path-history";
