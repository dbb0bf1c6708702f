// The harness as a board operator: it keeps the instance root from filling up
// with the sandboxes that runs which died before their result (or were stopped) leave retained,
// as an operator does through the Retained sandboxes page (before, nobody ever recovered them:
// each is a full copy of its workspace, and they accumulate for the whole run).
//
// Only sandboxes the checker would otherwise judge at the end, and only after judging them now:
// a local lease of a run that ended failed, cancelled or timed out WITHOUT an accepted result (an
// accepted result's sandbox is never discarded here: those holds are what the suite is about),
// whose open actions are only file-recovery obligations, retained for at least `minAgeMs`. It
// invokes an operator.discard operation with what it observed (pinned, not active, released only
// with a confirmed stop receipt, the sandbox directory on disk, listed by core's
// listRetainedSandboxes) and discards through core's own Discard (discardRetainedSandbox: allocation
// id, the acknowledged actions, a fixed reason) only when every observation held; else it completes
// the operation `fail` itself. The checker accepts a destroyed lease of a held run only with such a
// verified Discard that may have taken effect (check.ts `discarded`).
import { existsSync, statfsSync } from "node:fs";
import path from "node:path";
import type { PrismaClient } from "@copyback/db";
import type { createDefaultRegistry } from "@copyback/core/providers";
import {
  discardRetainedSandbox,
  listRetainedSandboxes,
  type DiscardRefusal,
} from "@copyback/core/sandboxes";
import { FILE_RECOVERY } from "./checker/verdict";
import { OPERATOR_DISCARD_REASON } from "./collect";
import type { History } from "./history";
import { completionOfError, errorFields } from "./perform";

const ENDED = new Set(["failed", "cancelled", "timed_out"]);

// Discard's admission refusals: decided before its intent is written, so nothing happened (fail).
// Every other error comes after the admission (a provider's destroy error, discard_unrecorded,
// discard_superseded, lease_changed): the sandbox may be destroyed, and the cleanup sweep finishes
// an admitted Discard, so its outcome is unknown (info).
const ADMISSION_REFUSALS: Record<DiscardRefusal, true> = {
  lease_not_found: true,
  sandbox_already_destroyed: true,
  lease_failed: true,
  allocation_unnamed: true,
  allocation_mismatch: true,
  sandbox_not_retained: true,
  cleanup_in_progress: true,
  copyback_pending: true,
  acknowledgement_missing: true,
  acknowledgement_unknown: true,
  reason_required: true,
};
const refusedAtAdmission = (code: string) => Object.hasOwn(ADMISSION_REFUSALS, code);

export interface OperatorOptions {
  companyId: string;
  instanceRoot: string;
  history: History;
  /** A retained sandbox is discarded once it is this old (the checker saw it kept meanwhile). */
  minAgeMs: number;
  /** Two-host mode: this operator is that host's console; it passes over sandboxes of other hosts (Discard would refuse them). */
  hostId?: string | null;
}

/** One pass: discards every eligible retained local sandbox; answers how many. */
export async function operatorPass(prisma: PrismaClient, opts: OperatorOptions, registry: ReturnType<typeof createDefaultRegistry>): Promise<number> {
  const { sandboxes } = await listRetainedSandboxes(prisma, { companyId: opts.companyId, limit: 500 });
  let discarded = 0;
  for (const s of sandboxes) {
    if (s.provider !== "local" || !s.runId || !s.providerLeaseId || s.ageSeconds * 1000 < opts.minAgeMs) continue;
    if (!s.runStatus || !ENDED.has(s.runStatus)) continue;
    const accepted = await prisma.nativeRunResult.count({ where: { runId: s.runId, schemaStatus: "accepted" } });
    if (accepted > 0) continue;
    const actions = await prisma.issueRecoveryAction.findMany({
      where: { companyId: opts.companyId, status: { in: ["active", "escalated"] }, OR: [{ leaseId: s.leaseId }, { runId: s.runId }] },
      select: { id: true, cause: true },
    });
    if (actions.some((a) => a.cause !== FILE_RECOVERY)) continue;
    const lease = await prisma.environmentLease.findUnique({ where: { id: s.leaseId }, select: { status: true, metadata: true, hostId: true } });
    if (opts.hostId && lease?.hostId !== opts.hostId) continue;
    const metadata = (lease?.metadata ?? {}) as Record<string, unknown>;
    const observed = {
      leaseStatus: lease?.status ?? null,
      stopReceipt: metadata.sandboxStopAndRetainReceipt != null,
      sandboxOnDisk: existsSync(path.join(opts.instanceRoot, "sandboxes", s.providerLeaseId)),
      listed: true,
    };
    const pinned = observed.leaseStatus !== null && observed.leaseStatus !== "active" && observed.leaseStatus !== "destroyed" && (observed.leaseStatus !== "released" || observed.stopReceipt);
    const verified = pinned && observed.sandboxOnDisk;
    const op = opts.history.invoke("operator.discard", { leaseId: s.leaseId, runId: s.runId, runStatus: s.runStatus, actionIds: actions.map((a) => a.id), verified, observed });
    if (!verified) {
      op.fail({ reason: "unverified" });
      continue;
    }
    try {
      await discardRetainedSandbox(
        { db: prisma, registry, ...(opts.hostId ? { hostId: opts.hostId } : {}) },
        { companyId: opts.companyId, leaseId: s.leaseId, providerLeaseId: s.providerLeaseId, acknowledgedActionIds: actions.map((a) => a.id), reason: OPERATOR_DISCARD_REASON, actor: { type: "local_board", id: null } },
      );
      discarded += 1;
      op.ok();
    } catch (error) {
      op[completionOfError(error, refusedAtAdmission)](errorFields(error, 200));
    }
  }
  return discarded;
}

/** The instance root's fill (history `disk.sample`): what told the acquisition failures' cause. */
export function sampleDisk(history: History, instanceRoot: string): void {
  try {
    const st = statfsSync(instanceRoot);
    const total = Number(st.blocks) * Number(st.bsize);
    const free = Number(st.bavail) * Number(st.bsize);
    history.append("disk.sample", { usedBytes: total - free, freeBytes: free });
  } catch {
    /* unmounted */
  }
}
