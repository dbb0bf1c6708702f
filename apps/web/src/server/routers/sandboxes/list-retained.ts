import { z } from "zod";
import { listRetainedSandboxes } from "@copyback/core/sandboxes";
import { inspectSandbox } from "~/server/environments/inspect-sandbox";
import { instanceProviders } from "~/server/recovery/export-retry";
import { companyProcedure } from "~/server/trpc";

/** At most this many remote sandboxes are read live per page load (each bounded by the inspect timeout). */
const LIVE_READS = 25;

export const retainedSandboxItem = z.object({
  leaseId: z.uuid(),
  runId: z.uuid().nullable(),
  runStatus: z.string().nullable(),
  issue: z.object({ id: z.uuid(), identifier: z.string(), title: z.string() }).nullable(),
  provider: z.string(),
  pluginId: z.string(),
  providerLeaseId: z.string().nullable(),
  leaseStatus: z.string(),
  leasePolicy: z.string(),
  stopped: z.boolean(),
  acquiredAt: z.date(),
  sizeBytes: z.number().nullable(),
  /** Where the provider told (measured after the sandbox's stop); a lower bound says why. */
  size: z
    .object({
      bytes: z.number(),
      entries: z.number(),
      workspaceBytes: z.number(),
      workspaceEntries: z.number(),
      lowerBound: z.enum(["time_budget", "entry_budget", "unreadable"]).nullable(),
      measuredAt: z.date(),
    })
    .nullable(),
  reasons: z.array(z.object({ kind: z.string(), text: z.string(), actionId: z.string().optional(), cause: z.string().optional() })),
  /** An operator's Discard recorded and not finished: its sandbox may already be gone. */
  discarding: z.object({ requestId: z.string(), since: z.date(), lastFailureCode: z.string().nullable() }).nullable(),
  /**
   * Issue 21: a remote (Daytona) sandbox read live through its lease's plugin (Inspection.remote):
   * the provider's own state and auto-delete policy, or why it was not read; null for local ones.
   */
  remote: z
    .discriminatedUnion("kind", [
      z.object({ kind: z.literal("read"), state: z.string(), providerState: z.string().nullable(), autoDelete: z.string().nullable(), autoDeleteMinutes: z.number().nullable() }),
      z.object({ kind: z.literal("not_read"), code: z.string(), message: z.string() }),
    ])
    .nullable(),
});

export const listRetainedOutput = z.object({ total: z.number().int(), items: z.array(retainedSandboxItem) });

/**
 * The company's retained sandboxes, for runtime managers: every allocation
 * kept for recovery, why, its run and task, provider, pinned plugin and immutable allocation id.
 * No recorded controller, host or token is in it (R-UI-1).
 */
export const listRetainedSandboxesProcedure = companyProcedure("runtime:manage")
  .input(z.object({ limit: z.number().int().min(1).max(500).default(200) }))
  .output(listRetainedOutput)
  .query(async ({ ctx, input }) => {
    const { total, sandboxes } = await listRetainedSandboxes(ctx.db, { companyId: ctx.companyId, limit: input.limit });
    const remote = sandboxes.filter((s) => s.provider === "daytona" && s.providerLeaseId !== null && !s.discarding).slice(0, LIVE_READS);
    const readings = new Map(
      await Promise.all(remote.map(async (s) => [s.leaseId, await inspectSandbox(instanceProviders, { id: s.leaseId, pluginId: s.pluginId, provider: s.provider, providerLeaseId: s.providerLeaseId! })] as const)),
    );
    return {
      total,
      items: sandboxes.map((s) => ({
        leaseId: s.leaseId,
        runId: s.runId,
        runStatus: s.runStatus,
        issue: s.issueId && s.issueIdentifier !== null && s.issueTitle !== null ? { id: s.issueId, identifier: s.issueIdentifier, title: s.issueTitle } : null,
        provider: s.provider,
        pluginId: s.pluginId,
        providerLeaseId: s.providerLeaseId,
        leaseStatus: s.leaseStatus,
        leasePolicy: s.leasePolicy,
        stopped: s.stopped,
        acquiredAt: s.acquiredAt,
        sizeBytes: s.sizeBytes,
        size: s.size,
        reasons: s.reasons.map((r) => ({ kind: r.kind, text: r.text, ...(r.kind === "recovery_action" ? { actionId: r.actionId, cause: r.cause } : {}) })),
        discarding: s.discarding ? { requestId: s.discarding.requestId, since: s.discarding.since, lastFailureCode: s.discarding.lastFailure?.code ?? null } : null,
        remote: readings.get(s.leaseId) ?? null,
      })),
    };
  });
