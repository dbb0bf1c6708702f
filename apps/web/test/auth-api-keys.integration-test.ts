// API key procedures (apiKeys.*, agentKeys.*), the principals keys resolve to, and me.get.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { isDomainError } from "@copyback/core/errors";
import { hashApiKey } from "~/server/auth/api-keys";
import { resolvePrincipal } from "~/server/auth/resolve-principal";
import { buildAuthWorld, callerFor, configureWebApp, disconnectWebApp, insertBoardKey, sessionPrincipal, type AuthWorld } from "./auth-fixture";

const testDb = useTestDatabase();
let world: AuthWorld;

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  world = await buildAuthWorld(testDb.prisma());
});
afterAll(disconnectWebApp);

const db = () => testDb.prisma();
const owner = () => sessionPrincipal(world.users.owner.id, [{ companyId: world.companyA.id, role: "owner" }, { companyId: world.companyB.id, role: "member" }]);
const member = () => sessionPrincipal(world.users.member.id, [{ companyId: world.companyA.id, role: "member" }]);
const otherOwner = () => sessionPrincipal(world.users.otherOwner.id, [{ companyId: world.companyB.id, role: "owner" }]);
const bearerHeaders = (secret: string) => new Headers({ authorization: `Bearer ${secret}` });

async function rejection(promise: Promise<unknown>): Promise<{ code: string; domainCode: string | null }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: string; cause?: unknown };
    return { code: e.code ?? "?", domainCode: isDomainError(e.cause) ? e.cause.code : null };
  }
  throw new Error("expected the call to be refused");
}

describe("apiKeys (board keys)", () => {
  it("creates a key whose secret is shown once and stored only as its sha256", async () => {
    const created = await callerFor(db(), owner()).apiKeys.create({ companyId: world.companyA.id, name: "CI suite" });
    expect(created.secret).toMatch(/^cbk_[A-Za-z0-9_-]{43}$/);
    expect(created.key).toMatchObject({ name: "CI suite", status: "active", user: { id: world.users.owner.id }, keyPrefix: created.secret.slice(0, 12) });
    const row = await db().boardApiKey.findUniqueOrThrow({ where: { id: created.key.id } });
    expect(row.keyHash).toBe(hashApiKey(created.secret));
    expect(Object.values(row).some((value) => value === created.secret)).toBe(false);

    const listed = await callerFor(db(), owner()).apiKeys.list({ companyId: world.companyA.id });
    const entry = listed.find((k) => k.id === created.key.id);
    expect(entry).toBeDefined();
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    expect(JSON.stringify(listed)).not.toContain(row.keyHash);

    const audit = await db().activityLog.findFirst({ where: { entityId: created.key.id, action: "board_api_key.created" } });
    expect(audit).toMatchObject({ companyId: world.companyA.id, actorType: "user", actorId: world.users.owner.id });
  });

  it("resolves the key to its user, restricted to the key's company", async () => {
    const created = await callerFor(db(), owner()).apiKeys.create({ companyId: world.companyA.id, name: "scoped" });
    const principal = await resolvePrincipal(bearerHeaders(created.secret));
    expect(principal).toEqual({
      kind: "board_user",
      userId: world.users.owner.id,
      isInstanceAdmin: false,
      via: "board_api_key",
      memberships: [{ companyId: world.companyA.id, role: "owner", status: "active" }],
    });
    // Company B's issues are invisible to it, though the owner is a member of B.
    const refused = await rejection(callerFor(db(), principal).issues.list({ companyId: world.companyB.id }));
    expect(refused.code).toBe("NOT_FOUND");
  });

  it("revocation takes effect on the key's very next request, writes one audit row, and is idempotent", async () => {
    const created = await callerFor(db(), owner()).apiKeys.create({ companyId: world.companyA.id, name: "to revoke" });
    expect((await resolvePrincipal(bearerHeaders(created.secret))).kind).toBe("board_user");
    const revoked = await callerFor(db(), owner()).apiKeys.revoke({ companyId: world.companyA.id, keyId: created.key.id });
    expect(revoked.status).toBe("revoked");
    await expect(resolvePrincipal(bearerHeaders(created.secret))).rejects.toMatchObject({ kind: "unauthenticated", code: "invalid_api_key" });
    const again = await callerFor(db(), owner()).apiKeys.revoke({ companyId: world.companyA.id, keyId: created.key.id });
    expect(again.revokedAt?.getTime()).toBe(revoked.revokedAt?.getTime());
    expect(await db().activityLog.count({ where: { entityId: created.key.id, action: "board_api_key.revoked" } })).toBe(1);
  });

  it("another company's key reads not found and stays live", async () => {
    const foreign = await insertBoardKey(db(), world.companyB.id, world.users.otherOwner.id);
    const refused = await rejection(callerFor(db(), owner()).apiKeys.revoke({ companyId: world.companyA.id, keyId: foreign.id }));
    expect(refused.code).toBe("NOT_FOUND");
    expect((await db().boardApiKey.findUniqueOrThrow({ where: { id: foreign.id } })).revokedAt).toBeNull();
    const outsider = await rejection(callerFor(db(), otherOwner()).apiKeys.list({ companyId: world.companyA.id }));
    expect(outsider.code).toBe("NOT_FOUND");
  });

  it("needs api_keys:manage: a member is refused and nothing is created", async () => {
    const before = await db().boardApiKey.count();
    expect((await rejection(callerFor(db(), member()).apiKeys.create({ companyId: world.companyA.id, name: "mine" }))).code).toBe("FORBIDDEN");
    expect((await rejection(callerFor(db(), member()).apiKeys.list({ companyId: world.companyA.id }))).code).toBe("FORBIDDEN");
    expect(await db().boardApiKey.count()).toBe(before);
  });

  it("a signed-in user creates keys only for themself; a key cannot mint keys", async () => {
    const before = await db().boardApiKey.count();
    const forOther = await rejection(callerFor(db(), owner()).apiKeys.create({ companyId: world.companyA.id, name: "x", userId: world.users.member.id }));
    expect(forOther).toEqual({ code: "FORBIDDEN", domainCode: "own_keys_only" });
    const key = await insertBoardKey(db(), world.companyA.id, world.users.owner.id);
    const keyPrincipal = await resolvePrincipal(bearerHeaders(key.secret));
    const minted = await rejection(callerFor(db(), keyPrincipal).apiKeys.create({ companyId: world.companyA.id, name: "child" }));
    expect(minted).toEqual({ code: "FORBIDDEN", domainCode: "session_required" });
    expect(await db().boardApiKey.count()).toBe(before + 1);
  });

  it("the local board names an active member whose role the key carries", async () => {
    const local = callerFor(db(), { kind: "local_board" });
    expect((await rejection(local.apiKeys.create({ companyId: world.companyA.id, name: "x" }))).domainCode).toBe("user_required");
    expect((await rejection(local.apiKeys.create({ companyId: world.companyA.id, name: "x", userId: world.users.suspended.id }))).domainCode).toBe("user_not_member");
    const created = await local.apiKeys.create({ companyId: world.companyA.id, name: "E2E suite", userId: world.users.manager.id });
    const principal = await resolvePrincipal(bearerHeaders(created.secret));
    expect(principal).toMatchObject({ kind: "board_user", userId: world.users.manager.id, memberships: [{ role: "runtime_manager" }] });
    const audit = await db().activityLog.findFirst({ where: { entityId: created.key.id } });
    expect(audit).toMatchObject({ actorType: "local_board", actorId: null });
  });

  it("an instance administrator without a membership cannot make a key (a key carries a membership's role)", async () => {
    const admin = sessionPrincipal(world.users.instanceAdmin.id, [], true);
    expect((await rejection(callerFor(db(), admin).apiKeys.create({ companyId: world.companyA.id, name: "x" }))).domainCode).toBe("user_not_member");
  });

  it("rejects bad input with nothing changed", async () => {
    const before = await db().boardApiKey.count();
    expect((await rejection(callerFor(db(), owner()).apiKeys.create({ companyId: world.companyA.id, name: "  " }))).code).toBe("BAD_REQUEST");
    expect((await rejection(callerFor(db(), owner()).apiKeys.create({ companyId: world.companyA.id, name: "x", expiresInDays: 0 }))).code).toBe("BAD_REQUEST");
    expect(await db().boardApiKey.count()).toBe(before);
  });

  it("an expiring key lists as expired once past its date and stops resolving", async () => {
    const created = await callerFor(db(), owner()).apiKeys.create({ companyId: world.companyA.id, name: "short", expiresInDays: 1 });
    expect(created.key.expiresAt?.getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);
    await db().boardApiKey.update({ where: { id: created.key.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const listed = await callerFor(db(), owner()).apiKeys.list({ companyId: world.companyA.id });
    expect(listed.find((k) => k.id === created.key.id)?.status).toBe("expired");
    await expect(resolvePrincipal(bearerHeaders(created.secret))).rejects.toMatchObject({ code: "invalid_api_key" });
  });
});

describe("agentKeys", () => {
  it("creates a key for an agent of the company that resolves to that agent", async () => {
    const created = await callerFor(db(), owner()).agentKeys.create({ companyId: world.companyA.id, agentId: world.a.agent.id, name: "runner" });
    expect(created.secret).toMatch(/^cba_/);
    expect(created.key.agent.id).toBe(world.a.agent.id);
    const principal = await resolvePrincipal(bearerHeaders(created.secret));
    expect(principal).toEqual({ kind: "agent", agentId: world.a.agent.id, companyId: world.companyA.id, keyId: created.key.id });
    const listed = await callerFor(db(), owner()).agentKeys.list({ companyId: world.companyA.id });
    expect(listed.map((k) => k.id)).toContain(created.key.id);
    expect(JSON.stringify(listed)).not.toContain(created.secret);

    await callerFor(db(), owner()).agentKeys.revoke({ companyId: world.companyA.id, keyId: created.key.id });
    await expect(resolvePrincipal(bearerHeaders(created.secret))).rejects.toMatchObject({ code: "invalid_api_key" });
  });

  it("another company's agent reads not found; an archived agent gets no key", async () => {
    const before = await db().agentApiKey.count();
    expect((await rejection(callerFor(db(), owner()).agentKeys.create({ companyId: world.companyA.id, agentId: world.b.agent.id, name: "x" }))).code).toBe("NOT_FOUND");
    const archived = await db().agent.create({ data: { companyId: world.companyA.id, name: `Retired ${world.tag}`, command: ["/bin/true"], archivedAt: new Date() } });
    expect((await rejection(callerFor(db(), owner()).agentKeys.create({ companyId: world.companyA.id, agentId: archived.id, name: "x" }))).domainCode).toBe("agent_archived");
    expect(await db().agentApiKey.count()).toBe(before);
  });

  it("an agent cannot manage keys", async () => {
    const created = await callerFor(db(), owner()).agentKeys.create({ companyId: world.companyA.id, agentId: world.a.agent.id, name: "runner 2" });
    const agent = await resolvePrincipal(bearerHeaders(created.secret));
    expect((await rejection(callerFor(db(), agent).agentKeys.list({ companyId: world.companyA.id }))).code).toBe("FORBIDDEN");
  });
});

describe("me.get", () => {
  it("describes each kind of principal", async () => {
    expect(await callerFor(db(), { kind: "anonymous" }).me.get()).toMatchObject({ kind: "anonymous", user: null, memberships: [] });
    expect(await callerFor(db(), { kind: "local_board" }).me.get()).toMatchObject({ kind: "local_board", user: null });
    const me = await callerFor(db(), owner()).me.get();
    expect(me).toMatchObject({ kind: "board_user", via: "session", isInstanceAdmin: false, user: { id: world.users.owner.id, email: world.users.owner.email } });
    expect(me.memberships.map((m) => [m.companyName, m.role]).sort()).toEqual(
      [
        [world.companyA.name, "owner"],
        [world.companyB.name, "member"],
      ].sort(),
    );
    const agent = await callerFor(db(), { kind: "agent", agentId: world.a.agent.id, companyId: world.companyA.id, keyId: "00000000-0000-4000-8000-000000000000" }).me.get();
    expect(agent).toMatchObject({ kind: "agent", agent: { id: world.a.agent.id, name: "Builder" } });
  });
});
