// Acquiring an environment lease for a run (DESIGN.md section 4).
//
// A new allocation writes the lease row FIRST (status active, provider and plugin id copied from
// the environment, R-EX-6), then asks the pinned plugin for a sandbox, then records what the
// provider returned. A crash between the two leaves an active lease without a provider lease id,
// which the cleanup sweep can find; the reverse order could leak a sandbox nobody knows about.
// A provider that does not answer is asked once more with the same lease id; if it still does
// not, the lease is `pending_cleanup` with a destroy intent (never `failed`), so a sandbox it may
// have made is destroyed by the sweep rather than orphaned.
import { randomBytes, randomUUID } from "node:crypto";
import { Prisma, type PrismaClient } from "@copyback/db/client";
import { z } from "zod";
import { conflict, DomainError, invalid, isDomainError, isUniqueViolation, messageOf, notFound } from "../errors";
import type { AcquireRequest, Allocation, EnvironmentProvider, LeaseHandle } from "../providers/types";
import {
  confirmedStopReceipt,
  LEASE_METADATA_KEYS,
  readIdentity,
  readIsolated,
  sandboxIdentitySchema,
  WORKSPACE_SENTINEL_SCHEMA,
  type WorkspaceSentinel,
} from "./lease-metadata";
import {
  LEASE_POLICIES,
  type AcquiredLease,
  type AcquireLeaseInput,
  type LeasePolicy,
  type LeaseProviderRegistry,
  type LeaseRow,
} from "./lease-types";
import { newDestroyIntent } from "./destroy-lease";
import { failureOf, parseLeaseInput } from "./lease-failure";
import { hasCapability } from "../providers/registry";
import { pluginForLease } from "./plugin-for-lease";
import { decideAcquireRetry } from "./provider-retry-policy";
import { leaseHeldSql } from "./lease-holds";
import { stopAndRetain } from "./release-lease";
import { patchLease, transitionLease } from "./transition-lease";

const acquireInput = z.object({
  companyId: z.uuid(),
  runId: z.uuid(),
  issueId: z.uuid().nullable(),
  environmentId: z.uuid(),
  executionWorkspaceId: z.uuid(),
  policy: z.enum(LEASE_POLICIES as [LeasePolicy, ...LeasePolicy[]]).optional(),
});

/** How many released leases of one environment and workspace a reuse looks at before allocating anew. */
const REUSE_CANDIDATES = 10;

export async function acquireLease(
  db: PrismaClient,
  registry: LeaseProviderRegistry,
  rawInput: AcquireLeaseInput,
): Promise<AcquiredLease> {
  const input = parseLeaseInput(acquireInput, rawInput);

  const [environment, workspace, run] = await Promise.all([
    db.environment.findFirst({ where: { id: input.environmentId, companyId: input.companyId } }),
    db.executionWorkspace.findFirst({ where: { id: input.executionWorkspaceId, companyId: input.companyId }, select: { id: true, hostId: true } }),
    db.heartbeatRun.findFirst({ where: { id: input.runId, companyId: input.companyId }, select: { id: true } }),
  ]);
  if (!environment) throw notFound("Environment");
  if (!workspace) throw notFound("Execution workspace");
  if (!run) throw notFound("Run");

  await checkEnvironmentCredentials(registry, environment);
  const policy = input.policy ?? environment.defaultLeasePolicy;
  if (policy === "reuse_by_environment") {
    const reused = await reuseReleasedLease(db, registry, input);
    if (reused) return reused;
  }
  return allocateNewLease(db, registry, { ...input, policy, environment, workspaceHostId: workspace.hostId });
}

/**
 * Issue 21: an environment whose plugin checks credentials (Daytona: the API key's variable) is
 * refused here, before a reuse or a new lease row, so a missing or rejected key never dispatches
 * a run into it: provider_credentials_missing / provider_credentials_rejected propagate with
 * details.variable, and nothing (no lease, no sandbox, no cleanup intent) is left behind. A plugin
 * that is not registered is left to the paths below, which refuse it with their own codes.
 */
async function checkEnvironmentCredentials(registry: LeaseProviderRegistry, environment: { pluginId: string; provider: LeaseRow["provider"]; config: unknown }): Promise<void> {
  const lookup = pluginForLease(registry, environment);
  if (lookup.kind !== "found" || !hasCapability(lookup.plugin, "credentialCheck")) return;
  await lookup.plugin.checkCredentials(environment.config);
}

/**
 * Reuses a released `reuse_by_environment` lease of the same environment and execution workspace
 * whose stop is proven by a confirmed receipt; never one without (a sandbox that may still be
 * running, or whose stop went to another plugin, is not a clean starting point), and never one
 * that holds files for recovery (lease-holds.ts): the selection itself leaves those out, so ten
 * held leases cannot hide a reusable one, and the compare-and-set repeats the condition, so a hold
 * written after the selection still wins. Returns null when none can be reused: the run gets a
 * new allocation and the held sandbox is never reseeded.
 */
async function reuseReleasedLease(
  db: PrismaClient,
  registry: LeaseProviderRegistry,
  input: z.infer<typeof acquireInput>,
): Promise<AcquiredLease | null> {
  const candidates = await db.$queryRaw<LeaseRow[]>(reuseCandidatesSql(input));
  for (const candidate of candidates) {
    const receipt = confirmedStopReceipt(candidate.metadata, candidate);
    if (receipt.kind !== "confirmed") continue;
    const identity = readIdentity(candidate.metadata);
    if (identity.kind !== "present" || identity.value.providerLeaseId !== candidate.providerLeaseId) continue;
    // R-EX-6: resumed only through the plugin pinned on the lease.
    const lookup = pluginForLease(registry, candidate);
    if (lookup.kind !== "found" || !hasCapability(lookup.plugin, "resume")) continue;

    // The stop receipt is consumed by the reuse: once the sandbox runs again it proves nothing
    // (R-EX-5), so the next stop must bring its own. The compare includes the receipt read above
    // and, again, that the lease holds nothing for recovery.
    const won = await transitionLease(db, {
      leaseId: candidate.id,
      from: ["released"],
      to: "active",
      expectMetadata: { key: LEASE_METADATA_KEYS.stopReceipt, value: receiptJson(candidate) },
      notHeld: true,
      // The size measured after that stop goes with it: the sandbox's files change once it runs.
      metadataPatch: { [LEASE_METADATA_KEYS.stopReceipt]: null, [LEASE_METADATA_KEYS.sandboxSize]: null, [LEASE_METADATA_KEYS.failure]: null },
      set: { runId: input.runId, issueId: input.issueId },
    });
    if (!won) continue;

    const handle: LeaseHandle = { leaseId: candidate.id, pluginId: candidate.pluginId, providerLeaseId: identity.value.providerLeaseId };
    try {
      const resumed = await lookup.plugin.resume(handle, identity.value);
      if (resumed.providerLeaseId !== identity.value.providerLeaseId || resumed.fingerprint !== identity.value.fingerprint) {
        throw conflict("provider_identity_mismatch", "The resumed sandbox is not the one recorded on the lease.");
      }
    } catch (error) {
      // The sandbox may be running now (a lost reply, a resume that half happened) and cannot prove
      // it is the recorded one: it is stopped and retained through the stop-only path (intent
      // first, R-SO-1; an unconfirmed stop stays pending for the sweep), never just marked failed,
      // and never offered for reuse again (reuseRefused). The run gets a new allocation.
      const active = await db.environmentLease.findUniqueOrThrow({ where: { id: candidate.id } });
      await stopAndRetain(db, registry, active, { intentMetadata: { [LEASE_METADATA_KEYS.reuseRefused]: failureOf(error, "provider_resume_failed"), [LEASE_METADATA_KEYS.failure]: failureOf(error, "provider_resume_failed") } });
      continue;
    }
    const lease = await db.environmentLease.findUniqueOrThrow({ where: { id: candidate.id } });
    return { lease, handle, reused: true, isolated: isolatedOf(lease) };
  }
  return null;
}

/**
 * The reuse candidates: released `reuse_by_environment` leases of this environment and execution
 * workspace that hold nothing for recovery, newest release first (through the
 * (environment_id, status) index; the hold is read per candidate through its own indexes).
 */
export function reuseCandidatesSql(input: { companyId: string; environmentId: string; executionWorkspaceId: string }, limit = REUSE_CANDIDATES): Prisma.Sql {
  return Prisma.sql`
    SELECT l.id, l.company_id AS "companyId", l.environment_id AS "environmentId", l.execution_workspace_id AS "executionWorkspaceId",
           l.run_id AS "runId", l.issue_id AS "issueId", l.provider::text AS provider, l.plugin_id AS "pluginId",
           l.provider_lease_id AS "providerLeaseId", l.lease_policy::text AS "leasePolicy", l.status::text AS status, l.metadata,
           l.acquired_at AS "acquiredAt", l.released_at AS "releasedAt", l.cleanup_claimed_by AS "cleanupClaimedBy",
           l.cleanup_claimed_until AS "cleanupClaimedUntil", l.cleanup_attempts AS "cleanupAttempts", l.next_cleanup_at AS "nextCleanupAt",
           l.created_at AS "createdAt", l.updated_at AS "updatedAt"
    FROM environment_leases l
    WHERE l.environment_id = ${input.environmentId}::uuid AND l.status = 'released'::lease_status
      AND l.company_id = ${input.companyId}::uuid AND l.execution_workspace_id = ${input.executionWorkspaceId}::uuid
      AND l.lease_policy = 'reuse_by_environment'::lease_policy
      AND NOT ${leaseHeldSql("l")}
    ORDER BY l.released_at DESC NULLS FIRST, l.id
    LIMIT ${limit}`;
}

function receiptJson(lease: LeaseRow): unknown {
  return (lease.metadata as Record<string, unknown>)[LEASE_METADATA_KEYS.stopReceipt];
}

async function allocateNewLease(
  db: PrismaClient,
  registry: LeaseProviderRegistry,
  input: z.infer<typeof acquireInput> & {
    policy: LeasePolicy;
    environment: { pluginId: string; provider: LeaseRow["provider"]; config: unknown };
    /** The host the run's claim bound the workspace to (claim-runs.ts), which is this host. */
    workspaceHostId: string | null;
  },
): Promise<AcquiredLease> {
  const { environment } = input;
  const lookup = pluginForLease(registry, environment);
  if (lookup.kind !== "found") throw new DomainError("unavailable", lookup.code, lookup.message);
  const plugin = lookup.plugin;
  if (!hasCapability(plugin, "acquire")) {
    throw new DomainError("unavailable", "provider_capability_missing", `Plugin ${plugin.pluginId} cannot acquire sandboxes.`);
  }

  const leaseId = randomUUID();
  try {
    await db.environmentLease.create({
      data: {
        id: leaseId,
        companyId: input.companyId,
        environmentId: input.environmentId,
        executionWorkspaceId: input.executionWorkspaceId,
        runId: input.runId,
        issueId: input.issueId,
        provider: environment.provider,
        pluginId: environment.pluginId, // R-EX-6: pinned for every later call
        // Issue 23: a host-local sandbox (local) lives on the workspace's host, and is bound to it;
        // a remote one (fake, Daytona) may be served from any host.
        hostId: plugin.hostLocal === true ? input.workspaceHostId : null,
        leasePolicy: input.policy,
        status: "active",
        metadata: {},
      },
    });
  } catch (error) {
    // environment_leases_one_active_ephemeral: one active ephemeral lease per environment and workspace.
    if (isUniqueViolation(error)) {
      throw conflict("lease_busy", "The environment already has an active ephemeral lease for this execution workspace.", {
        environmentId: input.environmentId,
        executionWorkspaceId: input.executionWorkspaceId,
      });
    }
    throw error;
  }

  let allocation: Allocation;
  try {
    allocation = await acquireWithRetry(plugin, {
      companyId: input.companyId,
      environmentId: input.environmentId,
      leaseId,
      runId: input.runId,
      config: environment.config,
    });
  } catch (error) {
    // The provider may have created the sandbox before its reply was lost: the lease is never
    // `failed` (that would orphan it) but `pending_cleanup` with a destroy intent naming the lease
    // id, which the cleanup sweep resolves (acquire is idempotent per lease id) and destroys.
    const intent = newDestroyIntent(
      { id: leaseId, companyId: input.companyId, runId: input.runId, pluginId: environment.pluginId },
      { providerLeaseId: null, reason: "acquire_unconfirmed" },
    );
    await transitionLease(db, {
      leaseId,
      from: ["active"],
      to: "pending_cleanup",
      metadataPatch: { [LEASE_METADATA_KEYS.destroyIntent]: intent, [LEASE_METADATA_KEYS.failure]: failureOf(error, "provider_acquire_failed") },
    });
    throw isDomainError(error) ? error : new DomainError("unavailable", "provider_acquire_failed", messageOf(error));
  }

  const identity = { providerLeaseId: allocation.identity.providerLeaseId, fingerprint: allocation.identity.fingerprint };
  // R-DT-2: new ephemeral allocations only; a reused lease never gets one (see reuseReleasedLease).
  const sentinel = input.policy === "ephemeral" ? await placeSentinel(plugin, { leaseId, pluginId: environment.pluginId, providerLeaseId: identity.providerLeaseId }, newSentinel(input.runId, leaseId, identity)) : null;
  const recorded = await patchLease(db, {
    leaseId,
    status: "active",
    set: { providerLeaseId: identity.providerLeaseId },
    metadataPatch: {
      identity,
      isolated: allocation.isolated,
      ...(sentinel ? { workspaceSentinel: sentinel } : {}),
    },
  });
  if (!recorded) throw conflict("lease_lost", "The lease stopped being active while the sandbox was allocated.", { leaseId });
  const lease = await db.environmentLease.findUniqueOrThrow({ where: { id: leaseId } });
  return {
    lease,
    handle: { leaseId, pluginId: environment.pluginId, providerLeaseId: identity.providerLeaseId },
    reused: false,
    isolated: allocation.isolated,
  };
}

/**
 * Asks the plugin for the lease's sandbox, repeating once with the same lease id when the failure
 * may be transient (provider-retry-policy.ts): providers return the same sandbox to the same lease
 * id, so a repeat after a lost reply adopts the sandbox the first call made instead of leaking it.
 */
async function acquireWithRetry(plugin: Required<Pick<EnvironmentProvider, "acquire">>, request: AcquireRequest): Promise<Allocation> {
  for (let failedAttempts = 1; ; failedAttempts += 1) {
    try {
      const allocation = await plugin.acquire(request);
      const identity = sandboxIdentitySchema.safeParse(allocation.identity);
      if (!identity.success) throw invalid("provider_allocation_invalid", `The provider returned no usable identity: ${z.prettifyError(identity.error)}`);
      return allocation;
    } catch (error) {
      if (decideAcquireRetry(failedAttempts, error).kind === "give_up") throw error;
    }
  }
}

/**
 * R-DT-2: a plugin with the `workspaceSentinel` capability gets the sentinel written into the new
 * sandbox (outside its exported tree) before the lease records it, so the lease never names a
 * sentinel the sandbox does not hold. If that write fails the lease records none: the run goes on,
 * and only an export-only retry of it stays blocked (a legacy allocation, clear 409). A plugin
 * without the capability keeps the database record alone (its retry is refused for the missing
 * capability).
 */
async function placeSentinel(plugin: EnvironmentProvider, handle: LeaseHandle, sentinel: WorkspaceSentinel): Promise<WorkspaceSentinel | null> {
  if (!hasCapability(plugin, "workspaceSentinel")) return sentinel;
  try {
    await plugin.writeWorkspaceSentinel(handle, sentinel);
    return sentinel;
  } catch {
    return null;
  }
}

function newSentinel(runId: string, leaseId: string, identity: { providerLeaseId: string; fingerprint: string }): WorkspaceSentinel {
  return {
    schema: WORKSPACE_SENTINEL_SCHEMA,
    runId,
    leaseId,
    providerLeaseId: identity.providerLeaseId,
    allocationFingerprint: identity.fingerprint,
    nonce: randomBytes(32).toString("hex"),
    createdAt: new Date().toISOString(),
  };
}

function isolatedOf(lease: LeaseRow): boolean {
  const read = readIsolated(lease.metadata);
  return read.kind === "present" && read.value;
}
