// The copyback engine: directory-merge locks, archives, manifests and the host merge.
export * from "./manifest/index";
export * from "./merge/index";
