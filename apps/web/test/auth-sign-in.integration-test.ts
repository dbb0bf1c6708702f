// Authenticated mode end to end through the real route handlers: sign-in (right and wrong
// password, rate limit), cookies, sessions (expiry, sign-out), CSRF on better-auth's routes and
// on cookie-authenticated tRPC mutations.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { POST as authPOST, GET as authGET } from "~/app/api/auth/[...all]/route";
import { GET as trpcGET, POST as trpcPOST } from "~/app/api/trpc/[trpc]/route";
import { createAuth } from "~/server/auth/better-auth";
import { CROSS_SITE, PASSWORD, SAME_ORIGIN, buildAuthWorld, configureWebApp, cookieHeaderFrom, disconnectWebApp, json, request, type AuthWorld } from "./auth-fixture";

const testDb = useTestDatabase();
let world: AuthWorld;
let ipCounter = 0;
/** Each test signs in from its own address so that per-IP limits of one test do not leak into another. */
const freshIp = () => `203.0.113.${++ipCounter}`;

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  world = await buildAuthWorld(testDb.prisma());
});
afterAll(disconnectWebApp);

function signIn(email: string, password: string, ip: string, headers: Record<string, string> = SAME_ORIGIN) {
  return authPOST(request({ path: "/api/auth/sign-in/email", body: { email, password }, headers: { ...headers, "x-forwarded-for": ip } }));
}

async function me(cookie: string) {
  const response = await trpcGET(request({ path: `/api/trpc/me.get?input=${encodeURIComponent(JSON.stringify({ json: null }))}`, headers: { cookie } }));
  const body = (await response.json()) as { result?: { data: { json: { kind: string; user: { email: string } | null; memberships: Array<{ companyId: string; role: string }> } } } };
  return { status: response.status, me: body.result?.data.json };
}

function trpcMutation(path: string, input: unknown, headers: Record<string, string>) {
  return trpcPOST(request({ path: `/api/trpc/${path}`, body: { json: input }, headers }));
}

describe("sign-in", () => {
  it("signs in with the right password: an httpOnly, SameSite=Lax session cookie that the API accepts", async () => {
    const response = await signIn(world.users.owner.email, PASSWORD, freshIp());
    expect(response.status).toBe(200);
    const setCookies = response.headers.getSetCookie();
    const session = setCookies.find((c) => c.startsWith("copyback.session_token="));
    expect(session).toBeDefined();
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    // Served over http (PUBLIC_URL): a Secure cookie would never come back.
    expect(session).not.toMatch(/;\s*Secure/i);

    const { status, me: who } = await me(cookieHeaderFrom(response));
    expect(status).toBe(200);
    expect(who?.kind).toBe("board_user");
    expect(who?.user?.email).toBe(world.users.owner.email);
    expect(who?.memberships.map((m) => [m.companyId, m.role]).sort()).toEqual(
      [
        [world.companyA.id, "owner"],
        [world.companyB.id, "member"],
      ].sort(),
    );
  });

  it("refuses a wrong password and an unknown email alike, with no session", async () => {
    const ip = freshIp();
    for (const [email, password] of [
      [world.users.member.email, "wrong password!"],
      [`nobody.${world.tag}@auth.example`, PASSWORD],
    ] as const) {
      const response = await signIn(email, password, ip);
      expect(response.status).toBe(401);
      expect(response.headers.getSetCookie().some((c) => c.startsWith("copyback.session_token=") && !c.startsWith("copyback.session_token=;"))).toBe(false);
    }
    expect(await testDb.prisma().authSession.count({ where: { userId: world.users.member.id } })).toBe(0);
  });

  it("rate-limits sign-in per address and email: the sixth attempt in a minute is refused even with the right password", async () => {
    const ip = freshIp();
    for (let attempt = 1; attempt <= 5; attempt++) {
      expect((await signIn(world.users.admin.email, `wrong ${attempt}`, ip)).status).toBe(401);
    }
    const blocked = await signIn(world.users.admin.email, PASSWORD, ip);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("x-retry-after"))).toBeGreaterThan(0);
    expect(await testDb.prisma().authSession.count({ where: { userId: world.users.admin.id } })).toBe(0);
    // Another account from the same address is not locked out by it.
    expect((await signIn(world.users.manager.email, PASSWORD, ip)).status).toBe(200);
  });

  it("rate-limits an account across addresses (a forged X-Forwarded-For does not reset it)", async () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      expect((await signIn(world.users.instanceAdmin.email, `wrong ${attempt}`, freshIp())).status).toBe(401);
    }
    expect((await signIn(world.users.instanceAdmin.email, PASSWORD, freshIp())).status).toBe(429);
  });

  it("refuses a cross-site sign-in post (better-auth's Origin check)", async () => {
    const response = await signIn(world.users.member.email, PASSWORD, freshIp(), CROSS_SITE);
    expect(response.status).toBe(403);
    expect(await testDb.prisma().authSession.count({ where: { userId: world.users.member.id } })).toBe(0);
  });

  it("issues Secure cookies when the console is served over https", async () => {
    const auth = createAuth({ prisma: testDb.prisma(), secret: "another-test-secret-0123456789abcdef", publicUrl: "https://console.example" });
    const response = await auth.handler(
      new Request("https://console.example/api/auth/sign-in/email", {
        method: "POST",
        headers: { "content-type": "application/json", origin: "https://console.example", "sec-fetch-site": "same-origin", "x-forwarded-for": freshIp() },
        body: JSON.stringify({ email: world.users.otherOwner.email, password: PASSWORD }),
      }),
    );
    expect(response.status).toBe(200);
    const session = response.headers.getSetCookie().find((c) => c.includes("copyback.session_token="));
    expect(session).toMatch(/^__Secure-copyback\.session_token=/);
    expect(session).toMatch(/;\s*Secure/i);
    expect(session).toMatch(/HttpOnly/i);
  });

  it("has no self sign-up", async () => {
    const response = await authPOST(
      request({ path: "/api/auth/sign-up/email", body: { email: `new.${world.tag}@auth.example`, password: PASSWORD, name: "New" }, headers: { ...SAME_ORIGIN, "x-forwarded-for": freshIp() } }),
    );
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(await testDb.prisma().user.count({ where: { email: `new.${world.tag}@auth.example` } })).toBe(0);
  });
});

describe("sessions", () => {
  it("an expired session is anonymous: 401 from protected procedures", async () => {
    const signedIn = await signIn(world.users.member.email, PASSWORD, freshIp());
    expect(signedIn.status).toBe(200);
    const cookie = cookieHeaderFrom(signedIn);
    expect((await me(cookie)).me?.kind).toBe("board_user");

    await testDb.prisma().authSession.updateMany({ where: { userId: world.users.member.id }, data: { expiresAt: new Date(Date.now() - 1000) } });

    expect((await me(cookie)).me?.kind).toBe("anonymous");
    const input = encodeURIComponent(JSON.stringify({ json: { companyId: world.companyA.id } }));
    const list = await trpcGET(request({ path: `/api/trpc/apiKeys.list?input=${input}`, headers: { cookie } }));
    expect(list.status).toBe(401);
  });

  it("sign-out ends the session server-side: the old cookie no longer works", async () => {
    const signedIn = await signIn(world.users.manager.email, PASSWORD, freshIp());
    const cookie = cookieHeaderFrom(signedIn);
    expect((await me(cookie)).me?.kind).toBe("board_user");
    const out = await authPOST(request({ path: "/api/auth/sign-out", body: {}, headers: { ...SAME_ORIGIN, cookie } }));
    expect(out.status).toBe(200);
    expect((await me(cookie)).me?.kind).toBe("anonymous");
  });

  it("reads memberships fresh on every request: a suspension applies to an open session at once", async () => {
    const signedIn = await signIn(world.users.suspended.email, PASSWORD, freshIp());
    expect(signedIn.status).toBe(200);
    const cookie = cookieHeaderFrom(signedIn);
    const input = encodeURIComponent(JSON.stringify({ json: { companyId: world.companyA.id } }));
    const response = await trpcGET(request({ path: `/api/trpc/issues.list?input=${input}`, headers: { cookie } }));
    expect(response.status).toBe(403);
  });

  it("answers better-auth's get-session for the sign-in page", async () => {
    const signedIn = await signIn(world.users.owner.email, PASSWORD, freshIp());
    const response = await authGET(request({ path: "/api/auth/get-session", headers: { cookie: cookieHeaderFrom(signedIn) } }));
    expect(response.status).toBe(200);
    expect(((await json(response)).user as { email: string }).email).toBe(world.users.owner.email);
  });
});

describe("CSRF on cookie-authenticated tRPC mutations", () => {
  it("refuses a cross-site mutation made with the session cookie, and changes nothing", async () => {
    const signedIn = await signIn(world.users.owner.email, PASSWORD, freshIp());
    const cookie = cookieHeaderFrom(signedIn);
    const before = await testDb.prisma().boardApiKey.count();
    const response = await trpcMutation("apiKeys.create", { companyId: world.companyA.id, name: "forged" }, { ...CROSS_SITE, cookie });
    expect(response.status).toBe(403);
    const body = (await response.json()) as { error: { json: { data: { domainCode: string } } } };
    expect(body.error.json.data.domainCode).toBe("cross_site_request");
    expect(await testDb.prisma().boardApiKey.count()).toBe(before);
  });

  it("refuses a mutation whose Origin is another site even without fetch metadata (older browsers)", async () => {
    const signedIn = await signIn(world.users.owner.email, PASSWORD, freshIp());
    const response = await trpcMutation("apiKeys.create", { companyId: world.companyA.id, name: "forged" }, { origin: "https://evil.example", cookie: cookieHeaderFrom(signedIn) });
    expect(response.status).toBe(403);
  });

  it("accepts the same mutation from the console's own origin", async () => {
    const signedIn = await signIn(world.users.owner.email, PASSWORD, freshIp());
    const response = await trpcMutation("apiKeys.create", { companyId: world.companyA.id, name: "from the console" }, { ...SAME_ORIGIN, cookie: cookieHeaderFrom(signedIn) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { result: { data: { json: { secret: string } } } };
    expect(body.result.data.json.secret).toMatch(/^cbk_/);
  });
});
