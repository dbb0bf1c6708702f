// Shared value types of the lease module. The enums are the generated client's
// (packages/db/prisma/schema.prisma: lease_status, lease_policy).
import { LeasePolicy as LeasePolicyEnum, LeaseStatus as LeaseStatusEnum, type EnvironmentLease } from "@copyback/db/client";
import type { ProviderRegistry } from "../providers/registry";
import type { LeaseHandle } from "../providers/types";
import type { StopReceiptRecord } from "./lease-metadata";

export type LeaseStatus = LeaseStatusEnum;
export const LEASE_STATUSES = Object.values(LeaseStatusEnum) as readonly LeaseStatus[];

export type LeasePolicy = LeasePolicyEnum;
export const LEASE_POLICIES = Object.values(LeasePolicyEnum) as readonly LeasePolicy[];

export type LeaseRow = EnvironmentLease;

/**
 * The lease row's identity and state that the pure decisions read: which company and run it is
 * bound to, which plugin and allocation it names, and its status. Each decision extends it with
 * the facts only it needs (finalization/export-lease-binding.ts, recovery/policies/decide-export-retry.ts).
 */
export type LeaseFacts = Pick<LeaseRow, "id" | "companyId" | "runId" | "pluginId" | "providerLeaseId" | "status">;

/**
 * What the lease module needs from the provider registry: the plugin pinned on a lease, by exact
 * plugin id (R-EX-6). `forLease` throws DomainError `provider_plugin_unavailable` or
 * `provider_plugin_mismatch`; it never substitutes another plugin.
 */
export type LeaseProviderRegistry = Pick<ProviderRegistry, "forLease">;

export interface AcquireLeaseInput {
  companyId: string;
  runId: string;
  issueId: string | null;
  environmentId: string;
  executionWorkspaceId: string;
  /** Defaults to environments.default_lease_policy. */
  policy?: LeasePolicy;
}

export interface AcquiredLease {
  lease: LeaseRow;
  handle: LeaseHandle;
  /** A released `reuse_by_environment` lease was resumed instead of allocating a new sandbox. */
  reused: boolean;
  isolated: boolean;
}

export interface ReleaseLeaseInput {
  leaseId: string;
  runId: string;
  /** agent_not_started: the run was refused before its agent was started in the sandbox (release-policy.ts). */
  outcome: "committed" | "failed" | "agent_not_started";
}

/**
 * Why a stop-and-retain or a destroy stays pending (R-EX-6, R-SO-1, R-SO-3): the lease is neither
 * released nor destroyed, and its intent waits for the cleanup sweep.
 */
export type PendingCleanupCode =
  | "provider_plugin_unavailable"
  | "provider_plugin_mismatch"
  | "provider_capability_missing"
  | "stop_failed"
  | "stop_unconfirmed"
  | "stop_receipt_mismatch"
  | "stop_intent_invalid"
  /** R-DT-1: the provider's auto-delete could not be disabled, or its record does not confirm it. */
  | "auto_delete_failed"
  | "auto_delete_unconfirmed"
  /** Another caller holds the lease's cleanup claim (R-EX-5): its stop or destroy is in flight. */
  | "cleanup_claimed"
  /** A destroy that was not confirmed after its retries: the sandbox may still exist (destroy-lease.ts). */
  | "destroy_failed"
  | "destroy_intent_invalid"
  /** The provider never named the allocation (a lost acquire reply); the sweep resolves it by lease id. */
  | "lease_not_allocated";

export type LeaseReleaseOutcome =
  | { kind: "destroyed"; leaseId: string }
  | { kind: "stopped_and_retained"; leaseId: string; receipt: StopReceiptRecord }
  | { kind: "pending_cleanup"; leaseId: string; code: PendingCleanupCode; message: string }
  /** A lease that had already failed (a reused sandbox that could not be resumed); a destroy never ends here. */
  | { kind: "failed"; leaseId: string; code: string; message: string };
