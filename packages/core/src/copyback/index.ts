// The copyback engine: directory-merge locks, archives, manifests, the host merge and delta copyback.
export * from "./locks/index";
export * from "./archive/index";
export * from "./manifest/index";
export * from "./merge/index";
export * from "./delta/index";
