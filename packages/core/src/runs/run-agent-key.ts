// Run-scoped agent API keys. Every local agent turn gets its own key,
// minted when the run's agent starts and passed in its environment (COPYBACK_API_KEY): it is
// stored like every agent key (sha256 in agent_api_keys, in the same `cba_` format the web app
// parses), bound to the run, and accepted by the web app only for that run's finish call while
// the run is running. It is revoked as soon as the agent's turn is over, and - whatever ends the
// run (commit, failure, cancellation, the reconciler's orphan sweep) - by the heartbeat_runs
// trigger of migration 20261201103454_run_scoped_agent_keys.
import { createHash, randomBytes } from "node:crypto";
import type { PrismaClient } from "@copyback/db";

/** The variable the agent finds its key in. */
export const RUN_AGENT_KEY_VARIABLE = "COPYBACK_API_KEY";

/** Same shape as apps/web/src/server/auth/api-keys.ts's agent keys: `cba_` + 32 random bytes, base64url. */
export function generateRunAgentKey(): { secret: string; hash: string; displayPrefix: string } {
  const secret = `cba_${randomBytes(32).toString("base64url")}`;
  return { secret, hash: createHash("sha256").update(secret, "utf8").digest("hex"), displayPrefix: secret.slice(0, 12) };
}

export async function mintRunAgentKey(db: PrismaClient, run: { companyId: string; agentId: string; runId: string }): Promise<{ keyId: string; secret: string }> {
  const key = generateRunAgentKey();
  const row = await db.agentApiKey.create({
    data: { companyId: run.companyId, agentId: run.agentId, runId: run.runId, name: `run ${run.runId}`, keyPrefix: key.displayPrefix, keyHash: key.hash },
    select: { id: true },
  });
  return { keyId: row.id, secret: key.secret };
}

/** Revokes the run's live keys; returns how many were still live. */
export async function revokeRunAgentKeys(db: PrismaClient, runId: string, now: Date = new Date()): Promise<number> {
  const { count } = await db.agentApiKey.updateMany({ where: { runId, revokedAt: null }, data: { revokedAt: now } });
  return count;
}
