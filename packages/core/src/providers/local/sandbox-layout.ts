// Where a local sandbox lives:
//   <instanceRoot>/sandboxes/<providerLeaseId>/          0700, owned by the lease
//     workspace/                                          the agent's files (exported, seeded)
//     sentinel.json                                       R-DT-2: the acquisition-time sentinel, outside the export
//     control/                                            the provider's private records
//       identity.json  processes.json  stopped.json
//       stat-cache.bin                                    the delta export's stat cache (stat-cache.ts)
//       agent/result.json                                 COPYBACK_RESULT_FILE, outside the export
//       inputs/<attachmentId>/<file name>                 R-RC-5: a reconstruction's saved sources, outside the export
//       pack/                                             R-PV-1: the agent pack (its runtime), outside the export
// Under bubblewrap the agent can write only workspace/ and control/agent/: it can neither read
// nor forge the identity, the sentinel or the process records; it reads control/inputs/ and control/pack/ read-only.
import { join } from "node:path";
import { DomainError } from "../../errors";

export interface SandboxLayout {
  root: string;
  workspace: string;
  /** R-DT-2: next to the workspace, never inside it (never exported, never seeded over). */
  sentinelFile: string;
  control: string;
  identityFile: string;
  processesFile: string;
  stoppedFile: string;
  /** copyback/delta's stat cache: recorded by the seed, read and renewed by each delta export. */
  statCacheFile: string;
  agentDir: string;
  resultFile: string;
  /** R-RC-5: placeInputs' files (sandbox-inputs.ts); never exported, removed by the next seed. */
  inputsDir: string;
  /** R-PV-1: placeAgentPack's files (sandbox-pack.ts); never exported. */
  packDir: string;
}

/** Lease ids become directory names: nothing that could leave the sandboxes directory. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export const providerLeaseIdOf = (leaseId: string) => `local-${leaseId}`;

export function checkLeaseId(leaseId: string): void {
  if (!SAFE_ID.test(leaseId)) {
    throw new DomainError("invalid", "provider_lease_id_invalid", `Not a usable lease id: ${JSON.stringify(leaseId)}.`);
  }
}

export const sandboxesDir = (instanceRoot: string) => join(instanceRoot, "sandboxes");

export function sandboxLayout(instanceRoot: string, providerLeaseId: string): SandboxLayout {
  const root = join(sandboxesDir(instanceRoot), providerLeaseId);
  const control = join(root, "control");
  const agentDir = join(control, "agent");
  return {
    root,
    workspace: join(root, "workspace"),
    sentinelFile: join(root, "sentinel.json"),
    control,
    identityFile: join(control, "identity.json"),
    processesFile: join(control, "processes.json"),
    stoppedFile: join(control, "stopped.json"),
    statCacheFile: join(control, "stat-cache.bin"),
    agentDir,
    resultFile: join(agentDir, "result.json"),
    inputsDir: join(control, "inputs"),
    packDir: join(control, "pack"),
  };
}
