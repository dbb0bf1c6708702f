export * from "./client/index";
export * from "./migrate/index";
export * from "./schema/index";
export * from "./seed/index";
export * from "./notify/index";
export * from "./embedded/index";
export * from "./runtime/index";
