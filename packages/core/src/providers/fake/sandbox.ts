// A fake sandbox as the provider keeps it in memory, and the lookup every lease operation starts
// with: a lease of another plugin, or one whose sandbox is gone, is refused before anything runs.
import { DomainError } from "../../errors";
import type { LeaseHandle, SandboxIdentity, SandboxSentinel, StopReceipt } from "../types";
import type { FakeHashCache } from "./delta-export";
import type { FakeWorkspace } from "./virtual-workspace";

export interface FakeSandbox {
  leaseId: string;
  identity: SandboxIdentity;
  state: "running" | "stopped";
  workspace: FakeWorkspace;
  lastStop: StopReceipt | null;
  /** R-DT-2: the acquisition-time sentinel, kept beside (never inside) the workspace. */
  sentinel?: SandboxSentinel | null;
  /** R-DT-1 (autoDelete providers only): the provider's record of its auto-delete policy. */
  autoDelete?: "enabled" | "disabled";
  /** The delta export's "stat cache" (delta-export.ts), recorded by the seed. */
  hashCache?: FakeHashCache;
  /** R-RC-5: placeInputs' files by the absolute path the agent is told (outside the workspace); cleared by a seed. */
  inputs?: Map<string, Uint8Array>;
}

/** Sandboxes by provider lease id. Share one between two provider instances to model a controller restart. */
export type FakeSandboxStore = Map<string, FakeSandbox>;

export const providerLeaseIdOf = (leaseId: string) => `fake-${leaseId}`;

export function sandboxOf(store: FakeSandboxStore, pluginId: string, lease: LeaseHandle): FakeSandbox {
  if (lease.pluginId !== pluginId) {
    throw new DomainError("conflict", "provider_plugin_mismatch", `Lease ${lease.leaseId} belongs to plugin ${lease.pluginId}, not ${pluginId}.`);
  }
  const sandbox = store.get(lease.providerLeaseId);
  if (!sandbox || sandbox.leaseId !== lease.leaseId) {
    throw new DomainError("not_found", "provider_sandbox_missing", `The sandbox of lease ${lease.leaseId} does not exist.`);
  }
  return sandbox;
}
