// Provider plugins (DESIGN.md section 4): the contract, the registry that pins each lease to its
// plugin (R-EX-6), and the built-in local and fake providers.
export * from "./types";
export { ProviderRegistry, hasCapability, requireCapability } from "./registry";
export { createDefaultRegistry, type DefaultRegistryOptions } from "./default-registry";
export * from "./local/index";
export * from "./fake/index";
