// R-DT-2: the acquisition-time sentinel of a local sandbox, written once next to (never inside)
// its workspace, where the agent can neither read nor replace it.
import { DomainError, errnoOf } from "../../errors";
import type { EnvironmentProvider, LeaseHandle, SandboxSentinel } from "../types";
import type { LocalSandboxes } from "./local-sandboxes";
import { readRecord, sandboxSentinelRecord, writeRecord } from "./sandbox-records";

export type WorkspaceSentinel = Required<Pick<EnvironmentProvider, "writeWorkspaceSentinel" | "readWorkspaceSentinel">>;

export function workspaceSentinel(sandboxes: LocalSandboxes): WorkspaceSentinel {
  async function writeWorkspaceSentinel(lease: LeaseHandle, sentinel: SandboxSentinel): Promise<void> {
    const { layout } = await sandboxes.open(lease);
    const parsed = sandboxSentinelRecord.safeParse(sentinel);
    if (!parsed.success || sentinel.leaseId !== lease.leaseId || sentinel.providerLeaseId !== lease.providerLeaseId) {
      throw new DomainError("invalid", "provider_sentinel_invalid", `The sentinel does not belong to lease ${lease.leaseId}.`);
    }
    try {
      await writeRecord(layout.sentinelFile, parsed.data, { exclusive: true });
    } catch (error) {
      if (errnoOf(error) === "EEXIST") throw new DomainError("conflict", "provider_sentinel_exists", `The sandbox of lease ${lease.leaseId} already has a sentinel.`);
      throw error;
    }
  }

  async function readWorkspaceSentinel(lease: LeaseHandle): Promise<SandboxSentinel | null> {
    const { layout } = await sandboxes.open(lease);
    return readRecord(layout.sentinelFile, sandboxSentinelRecord);
  }

  return { writeWorkspaceSentinel, readWorkspaceSentinel };
}
