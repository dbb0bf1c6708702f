export * from "./publish-result";
export * from "../records/record-activity";
export * from "../records/result-document";
export * from "../records/run-json";
export * from "../records/run-log";
export * from "./settle-run";
export * from "./wake-agent";
