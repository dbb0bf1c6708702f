// R-EX-4: what every hold of a failed finalization names: the run, its accepted result and the
// exact lease and allocation the operator recovers files from (null where none was found).
import type { OwnershipKey } from "./finalization-owner";

export interface HeldSandbox {
  companyId: string;
  issueId: string;
  runId: string;
  resultId: string | null;
  leaseId: string | null;
  providerLeaseId: string | null;
  pluginId: string | null;
}

export function heldSandboxOf(key: OwnershipKey, resultId: string | null, lease: { id: string; providerLeaseId: string | null; pluginId: string } | null): HeldSandbox {
  return {
    companyId: key.companyId,
    issueId: key.issueId,
    runId: key.runId,
    resultId,
    leaseId: lease?.id ?? null,
    providerLeaseId: lease?.providerLeaseId ?? null,
    pluginId: lease?.pluginId ?? null,
  };
}
