// What a resume knows of the exact sandbox (R-EX-6): the identity recorded on the lease at
// acquisition, and what the lease's pinned plugin's inspect says of it now. Provider I/O: the
// export-only retry calls it before its admission transaction and again after the resume, the
// coordinator's retry after its resume (resume-sandbox.ts); never under row locks.
// Here, below finalization and recovery, so that both can use it (DESIGN.md section 9).
import { messageOf } from "../errors";
import { hasCapability } from "../providers/registry";
import type { EnvironmentProvider, LeaseHandle, SandboxState } from "../providers/types";
import { readIdentity, type SandboxIdentityRecord } from "./lease-metadata";
import type { LeaseRow } from "./lease-types";

/** What the pinned plugin's inspect said of the exact sandbox, against the identity recorded at acquisition. */
export type SandboxProbe =
  | { kind: "inspected"; state: SandboxState; identityMatches: boolean }
  | { kind: "probe_failed"; message: string }
  | { kind: "not_probed" };

/** The identity recorded at acquisition, if it names the lease's current provider allocation. */
export function identityOf(lease: LeaseRow): SandboxIdentityRecord | null {
  const read = readIdentity(lease.metadata);
  return read.kind === "present" && read.value.providerLeaseId === lease.providerLeaseId ? read.value : null;
}

export function handleOf(lease: LeaseRow): LeaseHandle {
  return { leaseId: lease.id, pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId as string };
}

/** What the pinned plugin's inspect says of the exact sandbox, against the identity recorded at acquisition. */
export async function probeSandbox(plugin: EnvironmentProvider, lease: LeaseRow): Promise<SandboxProbe> {
  const identity = identityOf(lease);
  if (!identity || !lease.providerLeaseId || !hasCapability(plugin, "inspect")) return { kind: "not_probed" };
  try {
    const inspection = await plugin.inspect(handleOf(lease));
    const matches = inspection.identity?.providerLeaseId === identity.providerLeaseId && inspection.identity.fingerprint === identity.fingerprint;
    return { kind: "inspected", state: inspection.state, identityMatches: matches };
  } catch (error) {
    return { kind: "probe_failed", message: messageOf(error) };
  }
}
