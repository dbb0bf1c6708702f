// The recovery core (DESIGN.md section 8): pure policies, the one binding check, the one
// recovery-action writer, the reconciler's sweeps and the operator actions.
export * from "./causes";
export * from "./actions";
export * from "./binding";
export * from "./holds";
export * from "./task-notice";
export * from "./policies/decide-takeover";
export * from "./policies/decide-attestation";
export * from "./policies/decide-orphan";
export * from "./sweeps/sweep";
export * from "./sweeps/finalization-sweep";
export * from "./sweeps/orphan-sweep";
export * from "./sweeps/owner-holds-sweep";
export * from "./sweeps/lease-cleanup-sweep";
export * from "./reconciler";
export * from "./operator/attest-owner-stop";
export * from "./policies/decide-resolve";
export * from "./operator/guidance";
export * from "./sweeps/settled-run-leases-sweep";
export * from "./policies/decide-unsafe-replay";
export * from "./sweeps/historical-unsafe-sweep";
