// Recorded process identities, liveness probes and the members of an agent's process group.
export { probeProcess, readProcessIdentity } from "../process/read-process-identity";
export { processGroupMembers } from "../process/stop-process-group";
