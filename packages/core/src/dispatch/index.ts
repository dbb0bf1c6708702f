export * from "../records/adapter-config";
export * from "./agent-outcome";
export * from "./agent-output";
export * from "./claimed-run";
export * from "./dispatch-log";
export * from "./dispatcher";
export * from "./execute-run";
export * from "./run-context";
