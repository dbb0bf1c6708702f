// A reconstruction's run at its provider handoff (R-RC-5): the exact intent, sources and execution
// gates rechecked immediately before the provider gets the run, a context too large to deliver
// refused before any sandbox, then the saved sources placed in the sandbox before the agent
// starts. A refusal settles the run like any setup failure and withdraws the decision (its hold
// reopens).
import { setTimeout as delay } from "node:timers/promises";
import type { Prisma } from "@copyback/db";
import { withTransaction } from "@copyback/db/client";
import { hasCapability } from "../providers/registry";
import type { EnvironmentProvider, LeaseHandle } from "../providers/types";
import type { ReconstructionContext } from "../recovery/reconstruction/authority";
import { contextDocument, decideContextDelivery, type ContextDelivery } from "../recovery/reconstruction/context-delivery";
import { reconstructionGate, withdrawReconstruction, type GateOutcome } from "../recovery/reconstruction/dispatch-gate";
import { placeReconstructionSources, type SourcesPlacement } from "../recovery/reconstruction/place-sources";
import { withSourcesByUrlOnly } from "../recovery/reconstruction/sandbox-sources";
import type { ReadyRunContext } from "./run-context";
import type { RunLeaseState } from "./run-lease-state";
import type { RunScope } from "./run-scope";

/** An ordinary run, a reconstruction admitted at its handoff, or a run refused (and settled) here. */
export type Handoff = { kind: "ordinary" } | { kind: "admitted"; admitted: ReconstructionContext } | { kind: "refused" };

/** R-RC-5: the handoff recheck, before the run's sandbox is acquired. */
export async function reconstructionHandoff(run: RunScope, lease: RunLeaseState, context: ReadyRunContext): Promise<Handoff> {
  // R-RC-5: immediately before the provider gets the run (its sandbox is acquired next), a
  // reconstruction's run rechecks its exact intent, sources and execution gates once more.
  const gate = context.carriesReconstruction ? await handoffGate(run, context.runId) : ({ kind: "ordinary" } as const);
  if (gate.kind === "reject") {
    await refuseReconstruction(run, lease, context.runId, gate.intentId, gate.code, `The reconstruction's run stopped before its provider handoff (${gate.code}): ${gate.message}`);
    return { kind: "refused" };
  }
  if (gate.kind !== "admit") return { kind: "ordinary" };
  const admitted = gate.context;
  // R-RC-5: a context too large for an environment variable, for an environment whose provider
  // cannot place it as a file, is refused here, before any sandbox (never an E2BIG at agent start).
  const oversized = contextTooLargeFor(run, context, admitted);
  if (oversized) {
    await refuseReconstruction(run, lease, context.runId, admitted.intentId, oversized.code, `The reconstruction's run stopped before its provider handoff (${oversized.code}): ${oversized.message}`, { contextBytes: oversized.bytes });
    return { kind: "refused" };
  }
  return { kind: "admitted", admitted };
}

/** How long the handoff waits out a source run's finalization lock that is only busy (one sweep's transaction). */
const HANDOFF_BUSY_WAIT_MS = 5_000;
const HANDOFF_BUSY_POLL_MS = 200;

/**
 * The handoff recheck, retried while only the source run's finalization lock is busy; still busy
 * after HANDOFF_BUSY_WAIT_MS, the run is refused as one whose source still has a copyback owner.
 */
async function handoffGate(run: RunScope, runId: string): Promise<Exclude<GateOutcome, { kind: "busy" }>> {
  const deadline = Date.now() + HANDOFF_BUSY_WAIT_MS;
  for (;;) {
    const gate = await withTransaction(run.deps.db, (tx) => reconstructionGate(tx, { runId, stage: "handoff", instanceRoot: run.deps.instanceRoot }));
    if (gate.kind !== "busy") return gate;
    if (Date.now() >= deadline) return { kind: "reject", intentId: gate.intentId, code: "active_copyback_owner", message: gate.message };
    await delay(HANDOFF_BUSY_POLL_MS);
  }
}

/**
 * R-RC-5: places the admitted reconstruction's sources (recovery/reconstruction/place-sources.ts)
 * and returns the context variables the agent is told. Null when the run was settled here: bytes
 * that no longer match the intent refuse the run as the handoff recheck does; a provider failure
 * fails it.
 */
export async function placeSources(
  run: RunScope,
  lease: RunLeaseState,
  context: ReadyRunContext,
  handle: LeaseHandle,
  plugin: EnvironmentProvider,
  admitted: ReconstructionContext,
): Promise<Record<string, string> | null> {
  let placement: SourcesPlacement;
  try {
    placement = await placeReconstructionSources(run.deps, { companyId: context.companyId, issueId: context.issueId, context: admitted, plugin, lease: handle });
  } catch (error) {
    const outage = await lease.requeueAfterOutage(error, "sources");
    if (outage.settled) return null;
    await lease.providerFailure(outage.code ?? "reconstruction_sources_unplaced", "The reconstruction's saved sources could not be placed in the sandbox", error);
    return null;
  }
  if (placement.kind === "refused") {
    const message = `The reconstruction's run stopped before its agent started (${placement.code}): ${placement.message} Nothing was placed in the sandbox.`;
    await refuseReconstruction(run, lease, context.runId, admitted.intentId, placement.code, message, { attachmentId: placement.attachmentId }, { agentNeverStarted: true });
    return null;
  }
  const delivery = decideContextDelivery(placement.document, placement.kind === "placed" ? placement.file : null);
  if (delivery.kind === "too_large") {
    // The lease's pinned plugin cannot place files though the environment's could (a reused
    // sandbox of another plugin): refused here, still before the agent.
    const message = `The reconstruction's run stopped before its agent started (${delivery.code}): ${delivery.message}`;
    await refuseReconstruction(run, lease, context.runId, admitted.intentId, delivery.code, message, { contextBytes: delivery.bytes }, { agentNeverStarted: true });
    return null;
  }
  const sources = placement.context.sources;
  await run.event(
    "info",
    placement.kind === "placed" ? "reconstruction.sources_placed" : "reconstruction.sources_by_url",
    placement.kind === "placed"
      ? `The ${admitted.attachments.length} saved source(s), verified against the intent, were placed in the sandbox outside its workspace (${"directory" in sources ? sources.directory : ""}).`
      : `The saved sources were not placed in the sandbox: ${"reason" in sources ? sources.reason : ""}`,
    {
      intentId: admitted.intentId,
      sources: { ...sources },
      attachmentIds: admitted.attachments.map((a) => a.attachmentId),
      context: { file: placement.kind === "placed" ? placement.file : null, sizeBytes: placement.document.bytes, sha256: placement.document.sha256, inlined: delivery.inlined },
    },
  );
  return delivery.env;
}

/**
 * R-RC-5: the refusal of a context too large to inline when the environment's provider cannot
 * place it as a file (context-delivery.ts), or null. Decided from the environment's plugin
 * before the lease is acquired; placeSources decides again with the lease's own plugin.
 */
function contextTooLargeFor(run: RunScope, context: ReadyRunContext, admitted: ReconstructionContext): Extract<ContextDelivery, { kind: "too_large" }> | null {
  const plugin = run.deps.registry.get(context.environmentPluginId);
  if (!plugin || hasCapability(plugin, "placeInputs")) return null;
  const delivery = decideContextDelivery(contextDocument(withSourcesByUrlOnly(admitted, plugin.pluginId)), null);
  return delivery.kind === "too_large" ? delivery : null;
}

/**
 * R-RC-5: a reconstruction's run refused (at its handoff recheck, or because its sources no longer
 * match): the run is settled like any setup failure and the decision withdrawn (its hold reopens).
 */
async function refuseReconstruction(
  run: RunScope,
  lease: RunLeaseState,
  runId: string,
  intentId: string | null,
  code: string,
  message: string,
  payload: Prisma.InputJsonObject = {},
  refusal: { agentNeverStarted?: true } = {},
): Promise<void> {
  await run.event("warn", "run.rejected", message, { ...payload, code, intentId });
  await lease.settleFailure(code, message, "provider_failure", refusal);
  if (intentId) await withTransaction(run.deps.db, (tx) => withdrawReconstruction(tx, { intentId, runId, code, message }));
}
