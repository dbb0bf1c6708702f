export * from "./client/index";
export * from "./migrate/index";
export * from "./schema/index";
