// The copyback engine: directory-merge locks, archives, manifests and the host merge.
export * from "./locks/index";
export * from "./archive/index";
export * from "./manifest/index";
export * from "./merge/index";
