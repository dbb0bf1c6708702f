// R-LG-1, R-LG-2: whether a late legacy copy-back failure (reported after cancellation already
// stopped and released the lease) may preserve the released allocation for repair, pure. The
// shell (recovery/legacy/record-late-copyback-failure.ts) loads this snapshot under the run's and
// the lease's row locks and writes the admitted outcome in the same transaction. Every mismatch
// fails closed: nothing is written, no other lease is ever looked at (the snapshot names its own).
import { confirmedStopReceipt } from "../../leases/lease-metadata";
import { readStoppedExecutionReceipt } from "../../records/stopped-execution-receipt";
import type { LegacyLeaseSnapshot, SnapshotRead } from "../legacy/lease-snapshot";

export interface LateLegacyLease {
  id: string;
  companyId: string;
  runId: string | null;
  issueId: string | null;
  executionWorkspaceId: string | null;
  provider: string;
  providerLeaseId: string | null;
  acquiredAt: Date;
  pluginId: string;
  leasePolicy: string;
  status: string;
  metadata: unknown;
}

export interface LateLegacyReportSnapshot {
  /** Who reports: the legacy run the adapter ran for. */
  report: { companyId: string; runId: string };
  run: { id: string; companyId: string; issueId: string; status: string; runtimeMode: string; runnerProfile: unknown } | null;
  snapshot: SnapshotRead;
  /** The lease the snapshot names (looked up by the snapshot's lease id and company only), or null. */
  lease: LateLegacyLease | null;
  /** The canonical host directory of the lease's execution workspace now (realpath), null if unreadable. */
  currentRealizedRoot: string | null;
  /** Another unsettled lease claims the same plugin and allocation (a competing owner). */
  competingOwner: boolean;
  /** An open legacy repair hold for this run and lease exists already. */
  alreadyRecorded: boolean;
}

export type LateLegacyRejectCode =
  | "run_not_found"
  | "run_not_legacy"
  | "run_not_cancelled"
  | "snapshot_missing"
  | "snapshot_invalid"
  | "snapshot_other_run"
  | "reusable_lease"
  | "not_ephemeral"
  | "lease_missing"
  | "lease_changed"
  | "lease_not_released"
  | "stop_receipt_missing"
  | "execution_receipt_missing"
  | "competing_owner";

export type LateLegacyDecision =
  | { kind: "admit"; snapshot: LegacyLeaseSnapshot }
  | { kind: "already_recorded" }
  | { kind: "reject"; code: LateLegacyRejectCode; message: string; field?: SnapshotField };

/** The fields of R-LG-1 that must all still match (each mismatch names itself). */
export const SNAPSHOT_FIELDS = ["company", "run", "issue", "workspace", "provider", "allocation", "acquisitionTime", "plugin", "realizedRoot"] as const;
export type SnapshotField = (typeof SNAPSHOT_FIELDS)[number];

export function decideLateLegacyReport(s: LateLegacyReportSnapshot): LateLegacyDecision {
  const reject = (code: LateLegacyRejectCode, message: string, field?: SnapshotField): LateLegacyDecision => ({ kind: "reject", code, message, ...(field ? { field } : {}) });
  const { run } = s;
  if (!run || run.companyId !== s.report.companyId || run.id !== s.report.runId) return reject("run_not_found", "The reporting run does not exist in this company.");
  if (run.runtimeMode !== "legacy") return reject("run_not_legacy", "Only a legacy run's late copy-back report is recorded this way.");
  if (run.status !== "cancelled") return reject("run_not_cancelled", `The run is ${run.status}; this path records reports that arrive after cancellation.`);
  // R-LG-2: without the original snapshot there is nothing to match, and nothing else is adopted.
  if (s.snapshot.kind === "missing") return reject("snapshot_missing", "The run recorded no lease snapshot before dispatch; no released lease is adopted.");
  if (s.snapshot.kind === "invalid") return reject("snapshot_invalid", `The run's lease snapshot is unreadable (${s.snapshot.message}); no released lease is adopted.`);
  const snap = s.snapshot.snapshot;
  if (snap.runId !== run.id || snap.companyId !== run.companyId) return reject("snapshot_other_run", "The lease snapshot belongs to another run.", snap.companyId !== run.companyId ? "company" : "run");
  // R-LG-2: reusable leases never enter (a resume may precede the database handoff).
  if (snap.leasePolicy === "reuse_by_environment") return reject("reusable_lease", "A reusable lease is never preserved by a late report: it may already serve another run.");
  if (snap.leasePolicy !== "ephemeral") return reject("not_ephemeral", "Only an originally ephemeral source is preserved by a late report.");
  if (s.alreadyRecorded) return { kind: "already_recorded" };
  const lease = s.lease;
  if (!lease) return reject("lease_missing", "The snapshot's lease no longer exists in this company.");
  if (lease.leasePolicy !== "ephemeral") return reject("not_ephemeral", "The lease is no longer ephemeral.");
  const mismatch = firstMismatch(snap, lease, run, s.currentRealizedRoot);
  if (mismatch) return reject("lease_changed", `The lease no longer matches its pre-dispatch snapshot (${mismatch}).`, mismatch);
  if (lease.status !== "released") return reject("lease_not_released", `The lease is ${lease.status}; this path records only a stopped and released source.`);
  if (confirmedStopReceipt(lease.metadata, lease).kind !== "confirmed") return reject("stop_receipt_missing", "The lease has no confirmed stop-and-retain receipt for its allocation.");
  const execution = readStoppedExecutionReceipt(run.runnerProfile);
  if (!execution || execution.leaseId !== lease.id) {
    return reject("execution_receipt_missing", "The run has no stopped-execution receipt (the Stop's acknowledgement) for this lease.");
  }
  if (s.competingOwner) return reject("competing_owner", "Another lease claims the same allocation.");
  return { kind: "admit", snapshot: snap };
}

function firstMismatch(
  snap: LegacyLeaseSnapshot,
  lease: LateLegacyLease,
  run: NonNullable<LateLegacyReportSnapshot["run"]>,
  realizedRoot: string | null,
): SnapshotField | null {
  if (lease.companyId !== snap.companyId) return "company";
  if (lease.runId !== snap.runId) return "run";
  if (lease.issueId !== snap.issueId || run.issueId !== snap.issueId) return "issue";
  if (lease.executionWorkspaceId !== snap.executionWorkspaceId) return "workspace";
  if (lease.provider !== snap.provider) return "provider";
  if (lease.providerLeaseId !== snap.providerLeaseId) return "allocation";
  if (lease.acquiredAt.toISOString() !== new Date(snap.acquiredAt).toISOString()) return "acquisitionTime";
  if (lease.pluginId !== snap.pluginId) return "plugin";
  if (realizedRoot === null || realizedRoot !== snap.realizedRoot) return "realizedRoot";
  return null;
}
