// Recorded process identities and liveness probes (R-OWN-12).
export type { ProcessIdentity, ProcessLiveness } from "./process-identity";
export { parseProcStat, type ProcStat } from "./proc-stat";
export { decideLiveness, type ProcessObservation } from "./liveness-policy";
export { probeProcess, readBootId, readProcStat, readProcessIdentity, type ProcOptions } from "./read-process-identity";
