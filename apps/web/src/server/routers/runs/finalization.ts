import { z } from "zod";
import { notFound } from "@copyback/core/errors";
import { FINALIZATION_PHASES } from "@copyback/core/records";
import { readIsolated } from "@copyback/core/leases";
import { companyProcedure } from "~/server/trpc";
import { hostIsolationReason } from "~/server/workspace/isolation-reason";
import { finalizationAttemptSchema, finalizationAttemptsOf } from "./finalization-attempts";
import { finalizeChangesOf } from "./finalize-changes";

export const runFinalizationInput = z.object({ runId: z.uuid() });

export const runFinalizationOutput = z.object({
  /** The native finalization coordinator; null when the run never had one (legacy or unfinished). */
  coordinator: z
    .object({
      phase: z.enum(FINALIZATION_PHASES),
      attempt: z.number().int(),
      failureCode: z.string().nullable(),
      nextAttemptAt: z.date().nullable(),
      committedAt: z.date().nullable(),
      updatedAt: z.date(),
    })
    .nullable(),
  workspaceOperations: z.array(
    z.object({
      id: z.uuid(),
      phase: z.enum(["workspace_prepare", "workspace_restore", "workspace_finalize"]),
      status: z.enum(["running", "succeeded", "failed"]),
      errorCode: z.string().nullable(),
      startedAt: z.date(),
      finishedAt: z.date().nullable(),
      /** Changed-file counts of a finalize operation's metadata; null for other operations. */
      changes: z
        .object({ written: z.number().int(), deleted: z.number().int(), unchanged: z.boolean(), omitted: z.boolean() })
        .nullable(),
    }),
  ),
  /** Each finalization attempt: its number, result, failure code and time. */
  attempts: z.array(finalizationAttemptSchema),
  /** The run's environment leases, newest first (a reused lease shows on its latest run). */
  leases: z.array(
    z.object({
      id: z.uuid(),
      provider: z.enum(["local", "fake", "daytona", "railway"]),
      pluginId: z.string(),
      policy: z.enum(["ephemeral", "reuse_by_environment", "retain_on_failure"]),
      status: z.enum(["active", "released", "pending_cleanup", "destroyed", "failed"]),
      /** From the lease metadata; null when it does not say (or says it in a shape we cannot read). */
      isolated: z.boolean().nullable(),
      /** When not isolated: why, as the worker found it on its host (isolation.json); null when unknown. */
      isolationReason: z.string().nullable(),
      acquiredAt: z.date(),
      releasedAt: z.date().nullable(),
    }),
  ),
});

/**
 * "Finalization details" of the run inspection page (coordinator, workspace operations, leases):
 * operator diagnostics, so only principals
 * with runtime:manage may read them (R-UI-2: diagnostics and operator guidance stay with operators).
 */
export const getRunFinalization = companyProcedure("runtime:manage")
  .input(runFinalizationInput)
  .output(runFinalizationOutput)
  .query(async ({ ctx, input }) => {
    const run = await ctx.db.heartbeatRun.findFirst({
      where: { id: input.runId, companyId: ctx.companyId },
      select: {
        finalization: {
          select: {
            phase: true,
            attempt: true,
            failureCode: true,
            nextAttemptAt: true,
            committedAt: true,
            updatedAt: true,
          },
        },
        workspaceOperations: {
          where: { companyId: ctx.companyId },
          orderBy: [{ startedAt: "asc" }, { id: "asc" }],
          take: 200,
          select: {
            id: true,
            phase: true,
            status: true,
            errorCode: true,
            startedAt: true,
            finishedAt: true,
            metadata: true,
          },
        },
        leases: {
          where: { companyId: ctx.companyId },
          orderBy: [{ acquiredAt: "desc" }, { id: "desc" }],
          take: 20,
          select: {
            id: true,
            provider: true,
            pluginId: true,
            leasePolicy: true,
            status: true,
            metadata: true,
            acquiredAt: true,
            releasedAt: true,
          },
        },
      },
    });
    if (!run) throw notFound("The run");
    const unisolated = run.leases.some((lease) => {
      const read = readIsolated(lease.metadata);
      return read.kind === "present" && !read.value;
    });
    const reason = unisolated ? await hostIsolationReason() : null;
    return {
      coordinator: run.finalization,
      workspaceOperations: run.workspaceOperations.map(({ metadata, ...operation }) => {
        const changes = operation.phase === "workspace_finalize" ? finalizeChangesOf(metadata) : null;
        return {
          ...operation,
          changes: changes
            ? { written: changes.written.total, deleted: changes.deleted.total, unchanged: changes.unchanged, omitted: changes.omitted }
            : null,
        };
      }),
      attempts: finalizationAttemptsOf(run.workspaceOperations),
      leases: run.leases.map(({ leasePolicy, metadata, ...lease }) => {
        const read = readIsolated(metadata);
        const isolated = read.kind === "present" ? read.value : null;
        return { ...lease, policy: leasePolicy, isolated, isolationReason: isolated === false ? reason : null };
      }),
    };
  });
