export * from "./permissions";
export * from "./principal";
export * from "./authorize";
