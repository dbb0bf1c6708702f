export * from "./claim-runs";
export * from "./publish-result";
export * from "./record-activity";
export * from "./result-document";
export * from "./run-json";
export * from "./run-log";
export * from "./settle-run";
export * from "./wake-agent";
