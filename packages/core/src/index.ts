export * from "./copyback/index";
