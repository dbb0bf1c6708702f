// Ownership of a run's physical copyback (R-OWN-1, R-OWN-6, R-OWN-7, R-OWN-9, R-OWN-13).
//
// The fence is the transaction-scoped advisory lock
//   pg_try_advisory_xact_lock(hashtextextended('native-workspace-finalization:<company>:<run>', 0))
// taken on a DEDICATED connection outside the application pool (R-OWN-6: the lock transaction
// holds no row locks, and even a one-connection pool keeps serving progress writes). It is held
// for the whole physical copyback; closing the connection (or the process dying) releases it.
//
// Because losing the connection does not prove the copy stopped (R-OWN-8), the owner also
// writes a durable receipt, `runner_profile_json.nativeWorkspaceFinalizationOwner` = { token,
// host, pid, processStart, bootId } (R-OWN-7), through the ordinary pool, and clears it on
// completion (only if the token is still its own). Publication checks both the lock connection
// and the durable token (R-OWN-9). A receipt left by an earlier owner is never overwritten here:
// judging whether that owner stopped is decideTakeover's (R-OWN-8, R-OWN-10, R-OWN-11): a live
// controller -> busy; a dead one with a durable barrier, or this boot's own joined token ->
// replaced exactly (token-checked); anything else -> owner_unverified for an operator.
import { randomBytes } from "node:crypto";
import { openDedicatedConnection, Prisma, type DedicatedConnection, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { DomainError } from "../errors";
import type { ControllerPlatformIdentity } from "../platforms/platform-identity";
import type { ProcessIdentity } from "../process/process-identity";
import { probeProcess } from "../process/read-process-identity";
import { decideTakeover, type TakeoverDecision } from "./decide-takeover";
import { type UnverifiedReason } from "../records/finalization-owner-receipt";
import { copybackProven } from "../records/copyback-proven";
import { FINALIZATION_OWNER_KEY, readFinalizationOwner, type FinalizationOwnerReceipt } from "../records/finalization-owner-receipt";
import { observeFinalizationBusy } from "../metrics/observe";

export const FINALIZATION_OWNERSHIP_LOST = "finalization_ownership_lost";

export function ownershipLost(): DomainError {
  return new DomainError("conflict", FINALIZATION_OWNERSHIP_LOST, "The copyback no longer owns this run; nothing was published.");
}

/** R-OWN-1: the advisory lock key, shared by the finalizer, the reconciler and the maintenance SQL. */
export function finalizationLockKey(companyId: string, runId: string): string {
  return `native-workspace-finalization:${companyId}:${runId}`;
}

export interface OwnershipDeps {
  db: PrismaClient;
  /** Where the dedicated lock connection connects (the application database). */
  databaseUrl: string;
  /** This controller process (R-OWN-7). */
  controller: ProcessIdentity;
  /** R-RW-1: the platform deployment this controller runs in, written into its receipt; absent off any platform. */
  platform?: ControllerPlatformIdentity;
  /**
   * The dedicated lock connection, already being opened by the caller (openOwnerConnection)
   * while it read what it needed; absent: opened here. Either way the attempt owns it from the
   * call on: kept by the ownership it returns, closed in every other outcome.
   */
  connection?: Promise<DedicatedConnection>;
}

const OWNER_CONNECTION_NAME = "copyback-finalization-owner";

/**
 * R-OWN-6: the copyback's own connection, outside the application pool. Opened ahead by a caller
 * that hands it to takeFinalizationOwnership (its setup then overlaps the caller's
 * reads instead of adding to the copyback's latency); a caller that ends up not making the
 * attempt gives it to discardOwnerConnection.
 */
export function openOwnerConnection(databaseUrl: string): Promise<DedicatedConnection> {
  const opening = openDedicatedConnection(databaseUrl, { applicationName: OWNER_CONNECTION_NAME });
  opening.catch(() => undefined); // observed at once; its taker reads the failure
  return opening;
}

/** Closes a connection from openOwnerConnection that no ownership attempt took; never throws. */
export async function discardOwnerConnection(opening: Promise<DedicatedConnection>): Promise<void> {
  const connection = await opening.catch(() => null);
  if (connection) await closeLockConnection(connection);
}

export interface OwnershipKey {
  companyId: string;
  runId: string;
  issueId: string;
}

export interface FinalizationOwnership {
  readonly receipt: FinalizationOwnerReceipt;
  /** R-OWN-9: throws `finalization_ownership_lost` unless the lock connection answers and the durable token is still ours. */
  assertPublishable(tx: TransactionClient): Promise<void>;
  /** The same check outside a transaction (the merge's authorize and publish hooks, R-LK-6). */
  assertHeld(): Promise<void>;
  /** Joins the probe, clears the receipt (token-checked), ends the lock transaction and closes the connection. */
  release(): Promise<{ receiptCleared: boolean }>;
}

export type OwnershipAttempt =
  | { kind: "owned"; ownership: FinalizationOwnership; takeover: "none" | "controller_gone_with_barrier" | "resume_same_boot" }
  /**
   * R-OWN-2, R-OWN-8: someone else owns the copyback: the lock is held, the recorded controller
   * lives, or the receipt changed under this attempt. Nothing was written.
   */
  | { kind: "busy"; reason: "lock_held" | "owner_alive" | "owner_receipt_changed" }
  /** R-OWN-11, R-ORP-4: a leftover receipt whose copyback nobody can prove stopped; nothing was written. */
  | { kind: "owner_unverified"; reason: UnverifiedReason; receipt: FinalizationOwnerReceipt | null };

/** R-OWN-13: probe at a third of idle_in_transaction_session_timeout, at most every 30 s. */
const IDLE_TIMEOUT_MS_SQL =
  "SELECT setting::bigint * CASE unit WHEN 's' THEN 1000 WHEN 'min' THEN 60000 ELSE 1 END FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout'";
const MAX_PROBE_INTERVAL_MS = 30_000;

/**
 * R-OWN-10: tokens this process joined (its copyback callback finished) but could not clear.
 * Process memory is exactly "this controller boot": a new process or boot starts empty, and an
 * unknown token is never in it.
 */
const joinedTokens = new Map<string, string>();

export async function takeFinalizationOwnership(deps: OwnershipDeps, key: OwnershipKey): Promise<OwnershipAttempt> {
  const attempt = await tryTakeFinalizationOwnership(deps, key);
  // Metrics: a busy skip is how contention between finalizers shows (R-OWN-2).
  if (attempt.kind === "busy") observeFinalizationBusy(attempt.reason);
  return attempt;
}

async function tryTakeFinalizationOwnership(deps: OwnershipDeps, key: OwnershipKey): Promise<OwnershipAttempt> {
  const connection = await (deps.connection ?? openDedicatedConnection(deps.databaseUrl, { applicationName: OWNER_CONNECTION_NAME }));
  let handedOver = false;
  let stopProbe: (() => Promise<void>) | null = null;
  try {
    // One round trip: the transaction, its lock (R-OWN-1) and the idle timeout the probe needs
    // (R-OWN-13). A simple query takes no parameters: the key is quoted by the client itself.
    // (A multi-statement query answers with one result per statement.)
    const [, lock] = (await connection.query(
      `BEGIN; SELECT pg_try_advisory_xact_lock(hashtextextended(${connection.escapeLiteral(finalizationLockKey(key.companyId, key.runId))}, 0)) AS locked, (${IDLE_TIMEOUT_MS_SQL}) AS ms`,
    )) as unknown as [unknown, { rows: { locked: boolean; ms: string | null }[] }];
    const lockRow = lock.rows[0];
    if (lockRow?.locked !== true) return { kind: "busy", reason: "lock_held" };

    const run = await deps.db.heartbeatRun.findFirst({
      where: { id: key.runId, companyId: key.companyId, nativeIssueId: key.issueId, runtimeMode: "native" },
      select: { runnerProfileJson: true },
    });
    if (!run) throw new DomainError("not_found", "not_found", "Run was not found.");
    const existing = readFinalizationOwner(run.runnerProfileJson);
    const decision = await decideAboutReceipt(deps, key, existing);
    if (decision.kind === "busy") return { kind: "busy", reason: decision.reason };
    if (decision.kind === "require_stop_verification") {
      return { kind: "owner_unverified", reason: decision.reason, receipt: existing.kind === "receipt" ? existing.receipt : null };
    }

    // The probe runs before the receipt exists, so no receipt is ever written without the live
    // owner object that clears it.
    stopProbe = startProbe(connection, Number(lockRow.ms ?? 0));
    const receipt: FinalizationOwnerReceipt = {
      token: randomBytes(24).toString("base64url"),
      host: deps.controller.host,
      pid: deps.controller.pid,
      processStart: deps.controller.startTime,
      bootId: deps.controller.bootId,
      // R-RW-1: every new receipt of a controller on a platform names its exact deployment.
      ...(deps.platform ? { platform: deps.platform } : {}),
    };
    const previousToken = existing.kind === "receipt" ? existing.receipt.token : null;
    // Written through the pool, not the lock transaction (R-OWN-6: it holds no row locks). A
    // takeover replaces exactly the receipt it judged; a fresh take never overwrites one.
    const written =
      previousToken === null
        ? await deps.db.$executeRaw`
            UPDATE heartbeat_runs
            SET runner_profile_json = runner_profile_json || jsonb_build_object(${FINALIZATION_OWNER_KEY}::text, ${JSON.stringify(receipt)}::jsonb),
                updated_at = now()
            WHERE id = ${key.runId}::uuid AND company_id = ${key.companyId}::uuid AND native_issue_id = ${key.issueId}::uuid
              AND runtime_mode = 'native' AND NOT (runner_profile_json ? ${FINALIZATION_OWNER_KEY})`
        : await deps.db.$executeRaw`
            UPDATE heartbeat_runs
            SET runner_profile_json = runner_profile_json || jsonb_build_object(${FINALIZATION_OWNER_KEY}::text, ${JSON.stringify(receipt)}::jsonb),
                updated_at = now()
            WHERE id = ${key.runId}::uuid AND company_id = ${key.companyId}::uuid AND native_issue_id = ${key.issueId}::uuid
              AND runtime_mode = 'native' AND runner_profile_json -> ${FINALIZATION_OWNER_KEY} ->> 'token' = ${previousToken}`;
    if (written !== 1) return { kind: "busy", reason: "owner_receipt_changed" };
    if (previousToken !== null) joinedTokens.delete(key.runId);
    const ownership = new Ownership(deps.db, connection, key, receipt, stopProbe);
    handedOver = true;
    return { kind: "owned", ownership, takeover: decision.kind === "free" ? "none" : decision.kind === "takeover" ? decision.reason : "resume_same_boot" };
  } finally {
    if (!handedOver) {
      await stopProbe?.().catch(() => undefined);
      await closeLockConnection(connection);
    }
  }
}

/** Loads what decideTakeover needs about a leftover receipt (R-OWN-12 probe, the barrier, this boot's evidence). */
async function decideAboutReceipt(deps: OwnershipDeps, key: OwnershipKey, existing: ReturnType<typeof readFinalizationOwner>): Promise<TakeoverDecision> {
  if (existing.kind === "none") return decideTakeover({ receipt: existing, self: deps.controller, liveness: null, barrier: false, joinedToken: null });
  const liveness =
    existing.kind === "receipt"
      ? await probeProcess({ pid: existing.receipt.pid, startTime: existing.receipt.processStart, bootId: existing.receipt.bootId, host: existing.receipt.host })
      : null;
  return decideTakeover({
    receipt: existing,
    self: deps.controller,
    liveness,
    barrier: await copybackProven(deps.db, key),
    joinedToken: joinedTokens.get(key.runId) ?? null,
  });
}

class Ownership implements FinalizationOwnership {
  #released: Promise<{ receiptCleared: boolean }> | null = null;

  constructor(
    private readonly db: PrismaClient,
    private readonly connection: DedicatedConnection,
    private readonly key: OwnershipKey,
    readonly receipt: FinalizationOwnerReceipt,
    private readonly stopProbe: () => Promise<void>,
  ) {}

  async assertPublishable(tx: TransactionClient): Promise<void> {
    await this.#assert(tx, true);
  }

  async assertHeld(): Promise<void> {
    await this.#assert(this.db, false);
  }

  async #assert(db: PrismaClient | TransactionClient, lockRow: boolean): Promise<void> {
    if (this.#released) throw ownershipLost();
    // Both checks must pass; they go to different connections, so they run side by side (one
    // round trip instead of two). The lock connection's failure is ownership lost, whatever the
    // token query says; a failing token query fails as it always did.
    const [connectionCheck, tokenCheck] = await Promise.allSettled([
      this.connection.query("SELECT 1"),
      db.$queryRaw<{ id: string }[]>(Prisma.sql`
        SELECT id FROM heartbeat_runs
        WHERE id = ${this.key.runId}::uuid
          AND runner_profile_json -> ${FINALIZATION_OWNER_KEY} ->> 'token' = ${this.receipt.token}
        ${lockRow ? Prisma.sql`FOR UPDATE` : Prisma.empty}`),
    ]);
    if (connectionCheck.status === "rejected") throw ownershipLost();
    if (tokenCheck.status === "rejected") throw tokenCheck.reason;
    if (tokenCheck.value.length !== 1) throw ownershipLost();
  }

  release(): Promise<{ receiptCleared: boolean }> {
    this.#released ??= this.#release();
    return this.#released;
  }

  async #release(): Promise<{ receiptCleared: boolean }> {
    // R-OWN-9/R-OWN-13: the probe is joined before the token is released.
    await this.stopProbe();
    let receiptCleared = false;
    try {
      const cleared = await this.db.$executeRaw`
        UPDATE heartbeat_runs
        SET runner_profile_json = runner_profile_json - ${FINALIZATION_OWNER_KEY}::text, updated_at = now()
        WHERE id = ${this.key.runId}::uuid
          AND runner_profile_json -> ${FINALIZATION_OWNER_KEY} ->> 'token' = ${this.receipt.token}`;
      receiptCleared = cleared === 1;
      if (receiptCleared) joinedTokens.delete(this.key.runId);
    } catch {
      // R-OWN-10: the callback joined but the clear failed; the receipt stays (contenders refuse
      // it while this controller lives) and only this process may resume it after reconnecting.
      joinedTokens.set(this.key.runId, this.receipt.token);
    } finally {
      await closeLockConnection(this.connection);
    }
    return { receiptCleared };
  }
}

async function closeLockConnection(connection: DedicatedConnection): Promise<void> {
  try {
    await connection.query("ROLLBACK");
  } catch {
    // The connection is gone: the lock went with it.
  }
  await connection.end().catch(() => undefined);
}

/**
 * R-OWN-13: keeps the lock transaction from being ended by idle_in_transaction_session_timeout
 * while the copyback does only filesystem work. A disabled timeout means no probe. The probe
 * never reconnects; a failed probe just stops (publication checks the connection anyway).
 */
function startProbe(connection: DedicatedConnection, timeoutMs: number): () => Promise<void> {
  if (!(timeoutMs > 0)) return async () => undefined;
  const intervalMs = Math.max(1, Math.min(Math.floor(timeoutMs / 3), MAX_PROBE_INTERVAL_MS));
  let inFlight: Promise<unknown> = Promise.resolve();
  let failed = false;
  const timer = setInterval(() => {
    if (failed) return;
    inFlight = inFlight.then(() => connection.query("SELECT 1")).catch(() => {
      failed = true;
    });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await inFlight;
  };
}
