// Shared value types of the lease module. The enums are the generated client's
// (packages/db/prisma/schema.prisma: lease_status, lease_policy).
import { LeasePolicy as LeasePolicyEnum, LeaseStatus as LeaseStatusEnum, type EnvironmentLease } from "@copyback/db";
import type { ProviderRegistry } from "../providers/registry";
import type { LeaseHandle } from "../providers/types";
import type { StopReceiptRecord } from "./lease-metadata";

export type LeaseStatus = LeaseStatusEnum;
export const LEASE_STATUSES = Object.values(LeaseStatusEnum) as readonly LeaseStatus[];

export type LeasePolicy = LeasePolicyEnum;
export const LEASE_POLICIES = Object.values(LeasePolicyEnum) as readonly LeasePolicy[];

export type LeaseRow = EnvironmentLease;

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
  outcome: "committed" | "failed";
}

/** Why a stop-and-retain stays pending (R-EX-6, R-SO-1, R-SO-3): the lease is neither released nor destroyed. */
export type PendingCleanupCode =
  | "provider_plugin_unavailable"
  | "provider_plugin_mismatch"
  | "provider_capability_missing"
  | "stop_failed"
  | "stop_unconfirmed"
  | "stop_receipt_mismatch"
  | "stop_intent_invalid"
  /** Another caller holds the lease's cleanup claim (R-EX-5): its stop is in flight. */
  | "cleanup_claimed";

export type LeaseReleaseOutcome =
  | { kind: "destroyed"; leaseId: string }
  | { kind: "stopped_and_retained"; leaseId: string; receipt: StopReceiptRecord }
  | { kind: "pending_cleanup"; leaseId: string; code: PendingCleanupCode; message: string }
  /** A destroy that could not happen: the lease is `failed` with the code (the files are already merged). */
  | { kind: "failed"; leaseId: string; code: string; message: string };
