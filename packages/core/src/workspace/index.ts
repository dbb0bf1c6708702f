// Host workspaces of runs: the prepared workspace descriptor and the preparation step.
export * from "./prepared-descriptor";
export * from "./prepare-run-workspace";
export * from "../records/workspace-operations";
