// R-EX-4, R-UI-2: the copyback-failed hold of a terminal copyback or commit failure. In the
// caller's transaction (the one that fails the run, as this owner): the run's exact lease gets its
// stop-only intent (ephemeral included: no release or destroy may touch its files) and the
// board-owned copyback-failed hold opens naming it. A crash can leave neither without the other,
// nor the failure without both.
import type { TransactionClient } from "@copyback/db/client";
import { isDomainError } from "../errors";
import { pinLeaseForRecovery, type PinOutcome } from "../leases/stop-intent";
import { openCopybackFailedAction } from "../records/actions";
import type { OwnershipKey } from "./finalization-owner";
import { heldSandboxOf } from "./held-sandbox";
import { loadPreparedWorkspace } from "./workspace-descriptor";

export type CopybackFailure = Pick<
  Parameters<typeof openCopybackFailedAction>[1],
  "failure" | "failureCode" | "hostWritesStarted" | "conflictCount" | "conflicts" | "bindingReason"
>;

export async function holdFailedCopyback(tx: TransactionClient, key: OwnershipKey, failure: CopybackFailure): Promise<{ actionId: string; pin: PinOutcome["kind"] }> {
  const { lease, resultId } = await leaseToPin(tx, key);
  const pinned = lease ? await pinLeaseForRecovery(tx, lease.id) : { kind: "nothing_to_pin" as const };
  const action = await openCopybackFailedAction(tx, { ...heldSandboxOf(key, resultId, lease), pin: pinned.kind, ...failure });
  return { actionId: action.actionId, pin: pinned.kind };
}

/**
 * The lease a terminal failure pins: the prepared descriptor's (the sandbox the export read), or,
 * when the descriptor itself cannot be read (a failure of its own), the run's newest lease, so a
 * broken descriptor never keeps the failure from being recorded. Only a lease still bound to this
 * run: one rebound to another run (finalization_lease_not_bound) holds that run's work and is
 * never stopped or held from here. With the coordinator's result.
 */
async function leaseToPin(tx: TransactionClient, key: OwnershipKey): Promise<{ lease: { id: string; providerLeaseId: string | null; pluginId: string } | null; resultId: string | null }> {
  const select = { id: true, providerLeaseId: true, pluginId: true } as const;
  let leaseId: string | null = null;
  try {
    leaseId = (await loadPreparedWorkspace(tx, key)).leaseId;
  } catch (error) {
    if (!isDomainError(error)) throw error;
  }
  const lease = leaseId
    ? await tx.environmentLease.findFirst({ where: { id: leaseId, companyId: key.companyId, runId: key.runId }, select })
    : await tx.environmentLease.findFirst({ where: { runId: key.runId, companyId: key.companyId }, orderBy: { createdAt: "desc" }, select });
  const coordinator = await tx.nativeRunFinalization.findUniqueOrThrow({ where: { runId: key.runId }, select: { resultId: true } });
  return { lease, resultId: coordinator.resultId };
}
