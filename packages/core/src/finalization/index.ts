export * from "./coordinator";
export * from "./coordinator-phases";
export * from "./status-arbiter";
export * from "./status-policy";
