// The auth and REST tests' world: two companies, a board user in every role, agents, an issue,
// a run, a lease and a recovery action in each company; plus helpers that point the web app's
// singletons (env, Prisma client, better-auth) at this file's test database and build requests
// for the real route handlers.
import type { PrismaClient } from "@copyback/db/client";
import type { Principal } from "@copyback/core/auth";
import { setPassword } from "~/server/auth/credentials";
import { generateApiKey } from "~/server/auth/api-keys";
import { LOCAL_CONSOLE_COOKIE, consoleCookieValue } from "~/server/auth/local-console";
import { createCaller } from "~/server/routers/_app";

export const PUBLIC_URL = "http://console.test";
export const PASSWORD = "correct horse battery staple";
const SECRET = "test-secret-0123456789abcdefghijklmnopqrstuvwxyz";

/** Local mode's console secret in tests (the launcher's `<COPYBACK_HOME>/console-secret`). */
export const CONSOLE_SECRET = "console-secret-0123456789abcdefghijklmnopqrstuvwxyz";
/** The Cookie header of a browser that opened the local sign-in link. */
export const CONSOLE_COOKIE = { cookie: `${LOCAL_CONSOLE_COOKIE}=${consoleCookieValue(CONSOLE_SECRET)}` } as const;

type Mode = "local" | "authenticated";

/** Points env(), db() and auth() at `databaseUrl` in `mode` (call in beforeAll, and to switch mode). */
export function configureWebApp(databaseUrl: string, mode: Mode): void {
  process.env.DATABASE_URL = databaseUrl;
  process.env.DATABASE_POOL_SIZE = "4";
  process.env.COPYBACK_DEPLOYMENT_MODE = mode;
  process.env.COPYBACK_PUBLIC_URL = PUBLIC_URL;
  process.env.COPYBACK_AUTH_SECRET = SECRET;
  process.env.COPYBACK_CONSOLE_SECRET = CONSOLE_SECRET;
  delete process.env.BETTER_AUTH_SECRET;
}

/** Disconnects the web app's own Prisma client (afterAll), before the harness drops the database. */
export async function disconnectWebApp(): Promise<void> {
  const holder = globalThis as unknown as { copybackPrisma?: PrismaClient };
  await holder.copybackPrisma?.$disconnect();
  delete holder.copybackPrisma;
}

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;

export type AuthWorld = Awaited<ReturnType<typeof buildAuthWorld>>;

export async function buildAuthWorld(db: PrismaClient) {
  const tag = unique();
  const user = async (name: string, isInstanceAdmin = false) => {
    const row = await db.user.create({ data: { name, email: `${name.toLowerCase()}.${tag}@auth.example`, isInstanceAdmin } });
    await setPassword(db, row.id, PASSWORD);
    return row;
  };
  const users = {
    owner: await user("Owner"),
    admin: await user("Admin"),
    manager: await user("Manager"),
    member: await user("Member"),
    suspended: await user("Suspended"),
    instanceAdmin: await user("Root", true),
    otherOwner: await user("Other"),
  };
  const companyA = await db.company.create({ data: { name: `Acme ${tag}`, issuePrefix: "ACME" } });
  const companyB = await db.company.create({ data: { name: `Globex ${tag}`, issuePrefix: "GLX" } });
  const member = (companyId: string, userId: string, role: "owner" | "admin" | "runtime_manager" | "member", status: "active" | "suspended" = "active") =>
    db.companyMembership.create({ data: { companyId, userId, role, status } });
  await member(companyA.id, users.owner.id, "owner");
  await member(companyA.id, users.admin.id, "admin");
  await member(companyA.id, users.manager.id, "runtime_manager");
  await member(companyA.id, users.member.id, "member");
  await member(companyA.id, users.suspended.id, "member", "suspended");
  await member(companyB.id, users.otherOwner.id, "owner");
  // The owner of A is also a plain member of B: a key of A must not reach B through it.
  await member(companyB.id, users.owner.id, "member");

  const place = async (companyId: string, prefix: string, agentName: string) => {
    const agent = await db.agent.create({ data: { companyId, name: agentName, command: ["/bin/true"] } });
    const environment = await db.environment.create({ data: { companyId, name: `env-${prefix}`, provider: "fake", pluginId: "builtin.fake" } });
    const issue = await db.issue.create({ data: { companyId, number: 1, identifier: `${prefix}-1`, title: `Task of ${prefix}`, status: "in_progress" } });
    const run = await db.heartbeatRun.create({ data: { companyId, agentId: agent.id, nativeIssueId: issue.id, status: "failed", runtimeMode: "native" } });
    const lease = await db.environmentLease.create({
      data: { companyId, environmentId: environment.id, runId: run.id, issueId: issue.id, provider: "fake", pluginId: "builtin.fake", leasePolicy: "retain_on_failure", status: "released" },
    });
    const olderHold = await db.issueRecoveryAction.create({
      data: { companyId, issueId: issue.id, runId: run.id, leaseId: lease.id, cause: "legacy_workspace_copyback_failed", fingerprint: `hold-${run.id}`, ownerType: "board", createdAt: new Date(Date.now() - 60_000) },
    });
    const newerIncident = await db.issueRecoveryAction.create({
      data: { companyId, issueId: issue.id, runId: run.id, cause: "native_workspace_finalization_owner_unverified", fingerprint: `owner-${run.id}`, ownerType: "board", status: "escalated" },
    });
    return { agent, environment, issue, run, lease, olderHold, newerIncident };
  };
  const a = await place(companyA.id, "ACME", "Builder");
  const b = await place(companyB.id, "GLX", "Globex Bot");
  const secondAgentA = await db.agent.create({ data: { companyId: companyA.id, name: "Reviewer", command: ["/bin/true"] } });
  return { tag, users, companyA, companyB, a, b, secondAgentA };
}

/** A board key straight in the database (the procedures that create keys are tested on their own). */
export async function insertBoardKey(db: PrismaClient, companyId: string, userId: string, extra: { revokedAt?: Date; expiresAt?: Date } = {}) {
  const key = generateApiKey("board");
  const row = await db.boardApiKey.create({ data: { companyId, userId, name: "test key", keyPrefix: key.displayPrefix, keyHash: key.hash, ...extra } });
  return { id: row.id, secret: key.secret };
}

export async function insertAgentKey(db: PrismaClient, companyId: string, agentId: string, extra: { revokedAt?: Date; expiresAt?: Date } = {}) {
  const key = generateApiKey("agent");
  const row = await db.agentApiKey.create({ data: { companyId, agentId, name: "agent key", keyPrefix: key.displayPrefix, keyHash: key.hash, ...extra } });
  return { id: row.id, secret: key.secret };
}

export function callerFor(db: PrismaClient, principal: Principal, headers: HeadersInit = {}) {
  return createCaller({ db, headers: new Headers(headers), principal });
}

export function sessionPrincipal(userId: string, memberships: Array<{ companyId: string; role: string; status?: string }>, isInstanceAdmin = false): Principal {
  return { kind: "board_user", userId, isInstanceAdmin, via: "session", memberships: memberships.map((m) => ({ status: "active", ...m })) };
}

// ---- HTTP ----------------------------------------------------------------------------------

export interface Call {
  method?: "GET" | "POST";
  /** Path under PUBLIC_URL, e.g. /api/runs/<id>. */
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** A raw body (for malformed JSON). */
  rawBody?: string;
}

export function request(call: Call): Request {
  const method = call.method ?? (call.body !== undefined || call.rawBody !== undefined ? "POST" : "GET");
  const body = call.rawBody ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
  return new Request(`${PUBLIC_URL}${call.path}`, {
    method,
    headers: { host: new URL(PUBLIC_URL).host, ...(body !== undefined ? { "content-type": "application/json" } : {}), ...call.headers },
    ...(body !== undefined ? { body } : {}),
  });
}

/** Same-origin browser headers of a fetch from the console's own pages. */
export const SAME_ORIGIN = { origin: PUBLIC_URL, "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors" } as const;
/** What a browser sends when a hostile page posts to the console. */
export const CROSS_SITE = { origin: "https://evil.example", "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors" } as const;

export function bearer(secret: string): Record<string, string> {
  return { authorization: `Bearer ${secret}` };
}

/** The Cookie header for the session cookies a response set. */
export function cookieHeaderFrom(response: Response): string {
  return response.headers
    .getSetCookie()
    .map((line) => line.split(";")[0] ?? "")
    .filter((pair) => pair.includes("=") && !pair.endsWith("="))
    .join("; ");
}

export async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}
