// Bearer API keys -> principals. Board keys act as their user with that user's role in the key's
// company only; agent keys act as their agent. A revoked, expired, unknown or malformed key is an
// error (401 invalid_api_key), never a silent fall back to anonymous: a script must learn at once
// that its key stopped working.
import type { PrismaClient } from "@copyback/db/client";
import type { Principal } from "@copyback/core/auth";
import { DomainError } from "@copyback/core/errors";
import { apiKeyKindOf, hashApiKey, lastUsedIsStale, lastUsedStaleBefore } from "./api-keys";

export function invalidApiKey(): DomainError {
  return new DomainError("unauthenticated", "invalid_api_key", "The API key is invalid, expired or revoked.");
}

function isLive(key: { revokedAt: Date | null; expiresAt: Date | null }, now: Date): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt.getTime() > now.getTime());
}

export async function principalFromApiKey(prisma: PrismaClient, secret: string, now: Date = new Date()): Promise<Principal> {
  const kind = apiKeyKindOf(secret);
  if (kind === null) throw invalidApiKey();
  const keyHash = hashApiKey(secret);

  if (kind === "agent") {
    const key = await prisma.agentApiKey.findUnique({
      where: { keyHash },
      select: {
        id: true,
        companyId: true,
        agentId: true,
        runId: true,
        revokedAt: true,
        expiresAt: true,
        lastUsedAt: true,
        agent: { select: { companyId: true, archivedAt: true } },
        run: { select: { status: true, agentId: true } },
      },
    });
    // An archived agent's keys stop with it; a key whose agent moved company is refused too.
    if (!key || !isLive(key, now) || key.agent.archivedAt !== null || key.agent.companyId !== key.companyId) throw invalidApiKey();
    // A run-scoped key lives exactly while its run runs (the trigger revokes it at the end; this
    // check does not depend on that having happened yet).
    if (key.runId !== null && (key.run?.status !== "running" || key.run.agentId !== key.agentId)) throw invalidApiKey();
    await touch(key.lastUsedAt, now, () =>
      prisma.agentApiKey.updateMany({ where: { id: key.id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lte: lastUsedStaleBefore(now) } }] }, data: { lastUsedAt: now } }),
    );
    return { kind: "agent", agentId: key.agentId, companyId: key.companyId, keyId: key.id, ...(key.runId !== null ? { runId: key.runId } : {}) };
  }

  const key = await prisma.boardApiKey.findUnique({
    where: { keyHash },
    select: {
      id: true,
      companyId: true,
      userId: true,
      revokedAt: true,
      expiresAt: true,
      lastUsedAt: true,
      user: { select: { memberships: { select: { companyId: true, role: true, status: true } } } },
    },
  });
  if (!key || !isLive(key, now)) throw invalidApiKey();
  await touch(key.lastUsedAt, now, () =>
    prisma.boardApiKey.updateMany({ where: { id: key.id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lte: lastUsedStaleBefore(now) } }] }, data: { lastUsedAt: now } }),
  );
  return {
    kind: "board_user",
    userId: key.userId,
    // A key is scoped to its company: instance-wide authority never travels in a key, and the
    // user's other memberships are invisible to it (another company's ids read as not found).
    isInstanceAdmin: false,
    memberships: key.user.memberships.filter((m) => m.companyId === key.companyId),
    via: "board_api_key",
  };
}

/** Throttled lastUsedAt write: skipped when recent; the conditional update keeps racing requests to one write. */
async function touch(lastUsedAt: Date | null, now: Date, write: () => Promise<unknown>): Promise<void> {
  if (!lastUsedIsStale(lastUsedAt, now)) return;
  await write();
}
