// Every retained sandbox allocation: the leases whose sandbox still exists
// (status not `destroyed`) and that hold files for recovery by lease-holds.ts's one condition, with
// why (retention-reasons.ts), their run and task, provider, pinned plugin and the provider's
// immutable allocation id, their age, and their size where the provider told it: measured by the
// worker after the sandbox's confirmed stop (leases/sandbox-size.ts, provider capability
// `measureSandbox`) and read here only while it belongs to the lease's current stop receipt
// (lease-metadata.ts readSandboxSize). Otherwise (a provider that cannot tell, a stop not yet
// confirmed, a failed measurement) it is unknown (null), never guessed. A lease with an unfinished
// operator Discard (discard-intent.ts: in flight, or interrupted and waiting for the reconciler) is
// listed as being discarded (`discarding`, the first reason), with no size: its sandbox may already
// be gone, so it is never shown as a sandbox with its files. Reads only; oldest first.
import { Prisma, type PrismaClient } from "@copyback/db/client";
import { LEASE_METADATA_KEYS, readLeaseFailure, readSandboxSize } from "../leases/lease-metadata";
import { leaseHeldSql, UNSETTLED_FINALIZATION_PHASES } from "../leases/lease-holds";
import { OPEN_RECOVERY_ACTION_STATUSES_SQL } from "../records/actions";
import { readDiscardIntent } from "./discard-intent";
import { retentionReasons, type RetentionReason } from "./retention-reasons";

export interface RetainedSandbox {
  leaseId: string;
  companyId: string;
  companyName: string;
  runId: string | null;
  runStatus: string | null;
  issueId: string | null;
  issueIdentifier: string | null;
  issueTitle: string | null;
  provider: string;
  pluginId: string;
  /** The provider's own id of the allocation, fixed at acquisition: Discard must name it. */
  providerLeaseId: string | null;
  leaseStatus: string;
  leasePolicy: string;
  /** A confirmed stop receipt is recorded: the sandbox is stopped with its files kept. */
  stopped: boolean;
  acquiredAt: Date;
  ageSeconds: number;
  /**
   * Bytes, where the provider told (the whole sandbox where it counted that, else its workspace);
   * null when unknown. A lower bound when `size.lowerBound` is set.
   */
  sizeBytes: number | null;
  size: RetainedSandboxSize | null;
  reasons: RetentionReason[];
  /** An operator's Discard recorded and not finished: its sandbox may already be destroyed. Null: none. */
  discarding: RetainedSandboxDiscard | null;
}

export interface RetainedSandboxDiscard {
  requestId: string;
  by: { type: string; id: string | null };
  reason: string;
  since: Date;
  /** The claim of the request (or resumption) in flight; null or past: nobody is finishing it right now. */
  claimedUntil: Date | null;
  /** Why the last try did not finish (the lease's recorded failure), null when none is recorded since. */
  lastFailure: { code: string; message: string; at: Date } | null;
}

export interface RetainedSandboxSize {
  bytes: number;
  entries: number;
  workspaceBytes: number;
  workspaceEntries: number;
  /** Why the counts may be short (a budget ran out, a directory was unreadable); null: exact. */
  lowerBound: "time_budget" | "entry_budget" | "unreadable" | null;
  measuredAt: Date;
}

/** The recorded size of the lease's current stop, or null (pure; exported for its tests). */
export function retainedSandboxSize(metadata: unknown, lease: { pluginId: string; providerLeaseId: string | null }): RetainedSandboxSize | null {
  const read = readSandboxSize(metadata, lease);
  if (read.kind !== "present") return null;
  const s = read.value;
  return {
    bytes: s.sandboxBytes ?? s.workspaceBytes,
    entries: s.sandboxEntries ?? s.workspaceEntries,
    workspaceBytes: s.workspaceBytes,
    workspaceEntries: s.workspaceEntries,
    lowerBound: s.lowerBound,
    measuredAt: new Date(s.measuredAt),
  };
}

interface Row {
  id: string;
  company_id: string;
  company_name: string;
  run_id: string | null;
  run_status: string | null;
  run_committed: boolean;
  finalization_unsettled: boolean;
  issue_id: string | null;
  identifier: string | null;
  title: string | null;
  provider: string;
  plugin_id: string;
  provider_lease_id: string | null;
  status: string;
  lease_policy: string;
  acquired_at: Date;
  stop_intent: boolean;
  reuse_refused: boolean;
  stop_receipt: boolean;
  actions: { id: string; cause: string }[];
  size_doc: unknown;
  receipt_doc: unknown;
  discard_doc: unknown;
  failure_doc: unknown;
  cleanup_claimed_until: Date | null;
}

const present = (key: string) => Prisma.sql`COALESCE(jsonb_typeof(l.metadata -> ${key}), 'null') <> 'null'`;

export async function listRetainedSandboxes(
  db: Pick<PrismaClient, "$queryRaw">,
  opts: { companyId?: string; limit: number; now?: Date },
): Promise<{ total: number; sandboxes: RetainedSandbox[] }> {
  const company = opts.companyId === undefined ? Prisma.empty : Prisma.sql`AND l.company_id = ${opts.companyId}::uuid`;
  const where = Prisma.sql`l.status <> 'destroyed'::lease_status ${company} AND ${leaseHeldSql("l")}`;
  const [counted, rows] = await Promise.all([
    db.$queryRaw<{ total: number }[]>`SELECT count(*)::int AS total FROM environment_leases l WHERE ${where}`,
    db.$queryRaw<Row[]>`
      SELECT l.id, l.company_id, c.name AS company_name, l.run_id, hr.status::text AS run_status,
        EXISTS (SELECT 1 FROM native_run_finalizations nf WHERE nf.run_id = l.run_id AND nf.phase = 'committed'::finalization_phase) AS run_committed,
        EXISTS (SELECT 1 FROM native_run_finalizations nf WHERE nf.run_id = l.run_id AND nf.phase::text = ANY(${[...UNSETTLED_FINALIZATION_PHASES]}::text[])) AS finalization_unsettled,
        l.issue_id, i.identifier, i.title, l.provider::text AS provider, l.plugin_id, l.provider_lease_id,
        l.status::text AS status, l.lease_policy::text AS lease_policy, l.acquired_at,
        ${present(LEASE_METADATA_KEYS.stopIntent)} AS stop_intent,
        ${present(LEASE_METADATA_KEYS.reuseRefused)} AS reuse_refused,
        ${present(LEASE_METADATA_KEYS.stopReceipt)} AS stop_receipt,
        l.metadata -> ${LEASE_METADATA_KEYS.sandboxSize} AS size_doc,
        l.metadata -> ${LEASE_METADATA_KEYS.stopReceipt} AS receipt_doc,
        l.metadata -> ${LEASE_METADATA_KEYS.discardIntent} AS discard_doc,
        l.metadata -> ${LEASE_METADATA_KEYS.failure} AS failure_doc,
        l.cleanup_claimed_until,
        COALESCE((SELECT jsonb_agg(jsonb_build_object('id', ra.id, 'cause', ra.cause) ORDER BY ra.created_at, ra.id)
                  FROM issue_recovery_actions ra
                  WHERE ra.status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL}
                    AND (ra.lease_id = l.id OR ra.evidence -> 'leaseIds' @> jsonb_build_array(l.id::text))), '[]'::jsonb) AS actions
      FROM environment_leases l
      JOIN companies c ON c.id = l.company_id
      LEFT JOIN issues i ON i.id = l.issue_id
      LEFT JOIN heartbeat_runs hr ON hr.id = l.run_id
      WHERE ${where}
      ORDER BY l.acquired_at ASC, l.id ASC
      LIMIT ${opts.limit}`,
  ]);
  const now = (opts.now ?? new Date()).getTime();
  return {
    total: counted[0]?.total ?? 0,
    sandboxes: rows.map((row) => {
      const discarding = discardOf(row);
      return {
        ...(discarding ? { sizeBytes: null, size: null } : sizeOf(row)),
        leaseId: row.id,
        companyId: row.company_id,
        companyName: row.company_name,
        runId: row.run_id,
        runStatus: row.run_status,
        issueId: row.issue_id,
        issueIdentifier: row.identifier,
        issueTitle: row.title,
        provider: row.provider,
        pluginId: row.plugin_id,
        providerLeaseId: row.provider_lease_id,
        leaseStatus: row.status,
        leasePolicy: row.lease_policy,
        stopped: row.stop_receipt,
        acquiredAt: row.acquired_at,
        ageSeconds: Math.max(0, Math.round((now - row.acquired_at.getTime()) / 1000)),
        reasons: retentionReasons({
          actions: row.actions,
          stopIntent: row.stop_intent,
          reuseRefused: row.reuse_refused,
          runStatus: row.run_status,
          runCommitted: row.run_committed,
          finalizationUnsettled: row.finalization_unsettled,
          discarding: discarding ? { requestId: discarding.requestId, lastFailureCode: discarding.lastFailure?.code ?? null } : null,
        }),
        discarding,
      };
    }),
  };
}

/**
 * The unfinished Discard on the row, if any. A hand-written intent that does not parse is still an
 * intent (the lease is held by it): shown as discarding, with what could be read.
 */
function discardOf(row: Row): RetainedSandboxDiscard | null {
  if (row.discard_doc === null || row.discard_doc === undefined) return null;
  const read = readDiscardIntent({ [LEASE_METADATA_KEYS.discardIntent]: row.discard_doc });
  const failure = readLeaseFailure({ [LEASE_METADATA_KEYS.failure]: row.failure_doc ?? null });
  const intent = read.kind === "present" ? read.intent : null;
  const since = intent ? new Date(intent.at) : row.acquired_at;
  // Only a failure recorded after this Discard was admitted is its own.
  const lastFailure = failure.kind === "present" && new Date(failure.value.at) >= since ? { code: failure.value.code, message: failure.value.message, at: new Date(failure.value.at) } : null;
  return {
    requestId: intent?.requestId ?? "unreadable",
    by: intent?.by ?? { type: "system", id: null },
    reason: intent?.reason ?? (read.kind === "invalid" ? read.message : ""),
    since,
    claimedUntil: row.cleanup_claimed_until,
    lastFailure,
  };
}

/** Only the two documents the size needs are read from the row, not the lease's whole metadata. */
function sizeOf(row: Row): Pick<RetainedSandbox, "sizeBytes" | "size"> {
  const metadata: Record<string, unknown> = {};
  if (row.size_doc !== null && row.size_doc !== undefined) metadata[LEASE_METADATA_KEYS.sandboxSize] = row.size_doc;
  if (row.receipt_doc !== null && row.receipt_doc !== undefined) metadata[LEASE_METADATA_KEYS.stopReceipt] = row.receipt_doc;
  const size = retainedSandboxSize(metadata, { pluginId: row.plugin_id, providerLeaseId: row.provider_lease_id });
  return { sizeBytes: size?.bytes ?? null, size };
}
