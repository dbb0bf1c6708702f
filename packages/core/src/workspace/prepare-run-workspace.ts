// prepareRunWorkspace: records a `workspace_prepare` operation, then, under the host
// workspace's directory-merge lock, takes the baseline manifest and exports the host tree that
// seeds the sandbox, both from the same locked view (no copyback can change the host between
// them), and stores the prepared workspace descriptor in the operation's metadata.
//
// R-FO-2: the descriptor is the merge baseline, not an export receipt; finalization still
// exports (records/copyback-proven.ts holds the only proof of copyback).
//
// R-FO-4: with `recoveryClaim`, the operation carries the caller's recovery claim
// (preparation-claim.ts), renewed while the work runs. A failure then leaves the operation
// `running` under that claim and throws PreparationFailedError with the token: only the claim's
// holder settles it (recovery/file-recovery.ts: the operation failed, the sandbox pinned and the
// file-recovery obligation opened in one transaction). A success whose claim was taken over in the
// meantime (a recovery judged this controller gone) records nothing and throws
// `preparation_claim_lost`: the run is no longer this caller's.
import { realpath } from "node:fs/promises";
import { Readable } from "node:stream";
import type { Prisma, PrismaClient } from "@copyback/db/client";
import { exportWorkspaceArchive } from "../copyback/archive/export";
import type { MergeLockProvider } from "../copyback/merge/types";
import { takeManifest } from "../copyback/manifest/take-manifest";
import { DomainError, isDomainError, messageOf, notFound } from "../errors";
import { requireCapability } from "../providers/registry";
import type { ProcessIdentity } from "../process/process-identity";
import type { EnvironmentProvider, LeaseHandle, SandboxIdentity } from "../providers/types";
import { recordRunEvent } from "../records/run-log";
import { manifestCounts, PREPARED_WORKSPACE_SCHEMA, preparedWorkspaceDescriptor, type PreparedWorkspaceDescriptor } from "./prepared-descriptor";
import { newPreparationClaim, PREPARATION_CLAIM_KEY, PREPARATION_CLAIM_MS, renewPreparationClaim } from "../records/preparation-claim";
import { errorCodeOf, finishWorkspaceOperation, startWorkspaceOperation } from "../records/workspace-operations";

/** R-FO-4: a preparation failure owned by a recovery claim; only its holder (this token) settles it. */
export class PreparationFailedError extends DomainError {
  readonly operationId: string;
  readonly claimToken: string;
  constructor(code: string, message: string, operationId: string, claimToken: string, cause: unknown) {
    super("unavailable", code, message, { operationId });
    this.operationId = operationId;
    this.claimToken = claimToken;
    this.cause = cause;
  }
}

export function isPreparationFailed(error: unknown): error is PreparationFailedError {
  return error instanceof PreparationFailedError;
}

export interface PrepareRunWorkspaceDeps {
  db: PrismaClient;
  /** Directory-merge locks of this instance (copyback/locks DirectoryMergeLocks). */
  locks: MergeLockProvider;
  now?: () => Date;
}

export interface PrepareRunWorkspaceInput {
  runId: string;
  lease: LeaseHandle;
  /** The plugin pinned on the lease (ProviderRegistry.forLease). */
  plugin: EnvironmentProvider;
  /** The allocation's identity when the caller has it (acquire); otherwise the plugin is asked (inspect). */
  identity?: SandboxIdentity;
  /** R-FO-4: record a recovery claim held by this controller (the dispatcher); see the header. */
  recoveryClaim?: { holder: ProcessIdentity | null; ttlMs?: number };
}

export interface PreparedRunWorkspace {
  operationId: string;
  descriptor: PreparedWorkspaceDescriptor;
}

export async function prepareRunWorkspace(
  deps: PrepareRunWorkspaceDeps,
  input: PrepareRunWorkspaceInput,
): Promise<PreparedRunWorkspace> {
  const { db } = deps;
  const now = deps.now ?? (() => new Date());
  const run = await db.heartbeatRun.findUnique({
    where: { id: input.runId },
    select: { id: true, companyId: true, nativeIssueId: true },
  });
  if (!run) throw notFound("Run");
  const lease = await db.environmentLease.findUnique({
    where: { id: input.lease.leaseId },
    select: { companyId: true, pluginId: true, executionWorkspace: true },
  });
  if (!lease || lease.companyId !== run.companyId) throw notFound("Environment lease");
  // R-EX-6: every call for a lease goes to exactly the plugin pinned on it.
  if (lease.pluginId !== input.lease.pluginId || input.plugin.pluginId !== lease.pluginId) {
    throw new DomainError("conflict", "provider_plugin_mismatch", "The plugin does not match the one pinned on the lease.");
  }
  const workspace = lease.executionWorkspace;
  if (!workspace) {
    throw new DomainError("invalid", "lease_without_workspace", "The lease is not bound to an execution workspace.");
  }
  // R-EX-6: the registry's one capability rule (advertised and implemented), before anything is recorded.
  requireCapability(input.plugin, "seedWorkspace");
  const seedWorkspace = input.plugin.seedWorkspace!.bind(input.plugin);

  const claimTtl = input.recoveryClaim?.ttlMs ?? PREPARATION_CLAIM_MS;
  const claim = input.recoveryClaim ? newPreparationClaim(input.recoveryClaim.holder, now(), claimTtl) : null;
  const operationId = await startWorkspaceOperation(db, {
    companyId: run.companyId,
    runId: run.id,
    issueId: run.nativeIssueId,
    phase: "workspace_prepare",
    metadata: { leaseId: input.lease.leaseId, executionWorkspaceId: workspace.id, ...(claim ? { [PREPARATION_CLAIM_KEY]: claim } : {}) },
  });
  // The holder renews its claim while it works; a renewal that finds the claim gone stops.
  const renewal = claim
    ? setInterval(() => {
        void renewPreparationClaim(db, operationId, claim.token, claimTtl)
          .then((held) => {
            if (!held) clearInterval(renewal);
          })
          .catch(() => undefined);
      }, Math.max(1_000, Math.floor(claimTtl / 3)))
    : undefined;
  renewal?.unref();
  try {
    const identity = input.identity ?? (await inspectIdentity(input.plugin, input.lease));
    const hostPath = await canonicalHostPath(workspace.hostPath);
    const exclude = [...workspace.excludedPaths];
    const baseline = await deps.locks.withLock(hostPath, async () => {
      const manifest = await takeManifest(hostPath, { exclude });
      await seedWorkspace(input.lease, asReadable(exportWorkspaceArchive(hostPath, { exclude })));
      return manifest;
    });
    const descriptor = preparedWorkspaceDescriptor.parse({
      schema: PREPARED_WORKSPACE_SCHEMA,
      executionWorkspaceId: workspace.id,
      hostPath,
      excludedPaths: exclude,
      baseline,
      leaseId: input.lease.leaseId,
      seed: { providerLeaseId: identity.providerLeaseId, fingerprint: identity.fingerprint },
      preparedAt: now().toISOString(),
    });
    const counts = manifestCounts(baseline);
    clearInterval(renewal);
    if (!(await finishWorkspaceOperation(db, operationId, { status: "succeeded", metadata: toJson(descriptor) }, claim ? { claimToken: claim.token } : {}))) {
      // R-FO-4: a recovery took this preparation over (it judged this controller gone): the
      // run is no longer this caller's and nothing more is recorded here.
      throw new DomainError("conflict", "preparation_claim_lost", "The workspace preparation was taken over by a recovery; this controller no longer owns the run.", { operationId });
    }
    await recordRunEvent(db, {
      companyId: run.companyId,
      runId: run.id,
      level: "info",
      code: "workspace.prepared",
      message: `Sandbox seeded from the host workspace (${counts.files} files, ${counts.directories} directories, ${counts.symlinks} symlinks).`,
      payload: { operationId, ...counts },
    });
    return { operationId, descriptor };
  } catch (error) {
    clearInterval(renewal);
    if (isDomainError(error) && error.code === "preparation_claim_lost") throw error;
    const code = errorCodeOf(error, "workspace_prepare_failed");
    // R-FO-4: a claimed preparation stays running under its claim; its holder settles it.
    if (!claim) await finishWorkspaceOperation(db, operationId, { status: "failed", errorCode: code });
    await recordRunEvent(db, {
      companyId: run.companyId,
      runId: run.id,
      level: "error",
      code: "workspace.prepare_failed",
      message: `Preparing the sandbox workspace failed (${code}).`,
      payload: { operationId, errorCode: code },
    });
    if (claim) throw new PreparationFailedError(code, `Preparing the sandbox workspace failed: ${messageOf(error)}`, operationId, claim.token, error);
    throw error;
  }
}

async function inspectIdentity(plugin: EnvironmentProvider, lease: LeaseHandle): Promise<SandboxIdentity> {
  const inspection = plugin.capabilities.has("inspect") ? await plugin.inspect?.(lease) : undefined;
  if (!inspection?.identity) {
    throw new DomainError("unavailable", "sandbox_identity_unknown", "The sandbox's identity could not be determined.");
  }
  return inspection.identity;
}

async function canonicalHostPath(hostPath: string): Promise<string> {
  try {
    return await realpath(hostPath);
  } catch {
    // No host path in the message (R-UA-4).
    throw new DomainError("unavailable", "workspace_host_path_missing", "The execution workspace's host directory does not exist.");
  }
}

function asReadable(stream: NodeJS.ReadableStream): Readable {
  return stream instanceof Readable ? stream : new Readable().wrap(stream);
}

/** The descriptor as stored JSON (plain data: the manifest type is JSON by construction). */
export function toJson(descriptor: PreparedWorkspaceDescriptor): Prisma.InputJsonObject {
  return JSON.parse(JSON.stringify(descriptor)) as Prisma.InputJsonObject;
}
