// R-PV-1: the agent-pack verification budget of a run, persisted WITH the run
// (runner_profile_json.agentPackVerification), so that a reattachment (the same run dispatched
// again, into a reused or a new sandbox, after a requeue or a restart) continues the budget it
// left instead of getting a fresh one. Every verification read is recorded here before its
// outcome is acted on. Only an operator's re-verification (the hold's resolution, outcome
// `reverify`) renews the budget, and it says so in the record.
//
// `held`: the run was put back in the queue under the hold `actionId` after two inconclusive
// reads; the claim skips it (NOT_HELD_BY_PACK_VERIFICATION_SQL) until the hold is resolved.
// A malformed record grants nothing: it reads as `malformed`, which the policy takes for a spent
// budget (the run is held before any read, never verified on a guess).
import { Prisma } from "@copyback/db/client";
import { z } from "zod";
import type { ProcessIdentity } from "../process/process-identity";
import type { DbOrTx } from "./run-log";
import { mergedJsonObject } from "./run-json";

export const AGENT_PACK_VERIFICATION_KEY = "agentPackVerification";
export const AGENT_PACK_VERIFICATION_SCHEMA = "copyback.agent-pack-verification.v1";

/** The reads kept on the run (the newest); the count in the budget is kept separately. */
const MAX_KEPT_READS = 20;

export const PACK_READ_OUTCOMES = ["verified", "inconclusive", "incompatible"] as const;

export const packRead = z.object({
  at: z.string(),
  leaseId: z.string().nullable(),
  outcome: z.enum(PACK_READ_OUTCOMES),
  /** Why (the policy's reason code: timeout, transport_error, digest_mismatch, ...). */
  reason: z.string(),
  detail: z.string().max(2000),
});
export type PackRead = z.infer<typeof packRead>;

export const packVerificationRecord = z.object({
  schema: z.literal(AGENT_PACK_VERIFICATION_SCHEMA),
  /** Inconclusive reads spent in the current budget (renewed only by an operator's reverify). */
  inconclusive: z.number().int().min(0),
  reads: z.array(packRead),
  renewals: z.array(z.object({ actionId: z.string(), at: z.string() })),
  held: z.object({ actionId: z.string(), at: z.string() }).nullable(),
});
export type PackVerificationRecord = z.infer<typeof packVerificationRecord>;

const EMPTY: PackVerificationRecord = { schema: AGENT_PACK_VERIFICATION_SCHEMA, inconclusive: 0, reads: [], renewals: [], held: null };

/** The run's record: none yet is an unspent budget; a malformed one says `malformed` (a spent budget to the policy). */
export function readPackVerification(runnerProfileJson: unknown): PackVerificationRecord & { malformed: boolean } {
  const profile = typeof runnerProfileJson === "object" && runnerProfileJson !== null && !Array.isArray(runnerProfileJson) ? (runnerProfileJson as Record<string, unknown>) : {};
  if (!(AGENT_PACK_VERIFICATION_KEY in profile)) return { ...EMPTY, malformed: false };
  const parsed = packVerificationRecord.safeParse(profile[AGENT_PACK_VERIFICATION_KEY]);
  return parsed.success ? { ...parsed.data, malformed: false } : { ...EMPTY, malformed: true };
}

/** Claim-time SQL: true for a run NOT held by its pack verification (no record, or none held: never NULL). */
export const NOT_HELD_BY_PACK_VERIFICATION_SQL = Prisma.sql`jsonb_typeof(runner_profile_json -> ${AGENT_PACK_VERIFICATION_KEY}::text -> 'held') IS DISTINCT FROM 'object'`;

async function lockRecord(db: DbOrTx, runId: string, where: Prisma.Sql): Promise<{ runner_profile_json: unknown } | null> {
  const rows = await db.$queryRaw<{ runner_profile_json: unknown }[]>`
    SELECT runner_profile_json FROM heartbeat_runs WHERE id = ${runId}::uuid AND ${where} FOR UPDATE`;
  return rows[0] ?? null;
}

async function writeRecord(db: DbOrTx, runId: string, record: PackVerificationRecord): Promise<void> {
  await db.$executeRaw`
    UPDATE heartbeat_runs
       SET runner_profile_json = ${mergedJsonObject("runner_profile_json", Prisma.sql`jsonb_build_object(${AGENT_PACK_VERIFICATION_KEY}::text, ${JSON.stringify(record)}::jsonb)`)},
           updated_at = now()
     WHERE id = ${runId}::uuid`;
}

const strip = ({ malformed: _malformed, ...record }: PackVerificationRecord & { malformed: boolean }): PackVerificationRecord => record;

/**
 * Records one read of a run this controller is running (compare-and-set on the running status and
 * the controller, under the run's row lock; the caller's transaction). Null: the run is no longer
 * this controller's, nothing was written and the caller stops.
 */
export async function recordPackRead(
  tx: DbOrTx,
  input: { runId: string; controller: ProcessIdentity; read: Omit<PackRead, "at"> },
): Promise<PackVerificationRecord | null> {
  const row = await lockRecord(
    tx,
    input.runId,
    Prisma.sql`status = 'running' AND controller_pid = ${input.controller.pid} AND controller_process_start = ${input.controller.startTime} AND controller_host = ${input.controller.host}`,
  );
  if (!row) return null;
  const before = strip(readPackVerification(row.runner_profile_json));
  const read: PackRead = { ...input.read, detail: input.read.detail.slice(0, 2000), at: new Date().toISOString() };
  const record: PackVerificationRecord = {
    ...before,
    inconclusive: before.inconclusive + (read.outcome === "inconclusive" ? 1 : 0),
    reads: [...before.reads, read].slice(-MAX_KEPT_READS),
  };
  await writeRecord(tx, input.runId, record);
  return record;
}

/** Marks the (locked) run held by `actionId` in the caller's transaction; the claim then skips it. */
export async function markHeldByPackVerification(tx: DbOrTx, input: { runId: string; actionId: string }): Promise<void> {
  const row = await lockRecord(tx, input.runId, Prisma.sql`TRUE`);
  if (!row) return;
  const before = strip(readPackVerification(row.runner_profile_json));
  await writeRecord(tx, input.runId, { ...before, held: { actionId: input.actionId, at: new Date().toISOString() } });
}

/**
 * The operator's re-verification (the hold's `reverify` resolution): a fresh budget, the hold
 * marker cleared so the claim takes the run again, the renewal recorded. Read history is kept.
 */
export async function renewPackBudget(tx: DbOrTx, input: { runId: string; actionId: string }): Promise<void> {
  const row = await lockRecord(tx, input.runId, Prisma.sql`TRUE`);
  if (!row) return;
  const before = strip(readPackVerification(row.runner_profile_json));
  await writeRecord(tx, input.runId, { ...before, inconclusive: 0, held: null, renewals: [...before.renewals, { actionId: input.actionId, at: new Date().toISOString() }] });
}
