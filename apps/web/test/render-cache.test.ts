// The render cache's policy (scripts/render-cache.mjs): which requests may be answered
// from it, what a notification drops, what is stored and for how long.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { LOCAL_CONSOLE_COOKIE as APP_COOKIE, consoleCookieValue } from "~/server/auth/local-console";
import {
  LOCAL_CONSOLE_COOKIE,
  MAX_ENTRIES,
  RenderCache,
  TTL_MS,
  cacheKeyOf,
  renderCacheEnabled,
  scopeOfNotification,
  storableHeaders,
} from "../scripts/render-cache.mjs";

const SECRET = "render-cache-secret-0123456789abcdefghijklmnop";
const COMPANY = randomUUID();
const ISSUE = randomUUID();
const BOARD = `/companies/${COMPANY}/issues`;
const cookie = `${APP_COOKIE}=${consoleCookieValue(SECRET)}`;

const request = (url: string, headers: Record<string, string> = {}, method = "GET") => ({
  method,
  url,
  headers: { host: "127.0.0.1:3100", cookie, ...headers },
});

describe("renderCacheEnabled", () => {
  it("is on in local mode with a console secret, unless turned off; never in authenticated mode", () => {
    expect(renderCacheEnabled({ COPYBACK_CONSOLE_SECRET: SECRET })).toBe(true);
    expect(renderCacheEnabled({ COPYBACK_CONSOLE_SECRET: SECRET, COPYBACK_WEB_RENDER_CACHE: "off" })).toBe(false);
    expect(renderCacheEnabled({ COPYBACK_CONSOLE_SECRET: SECRET, COPYBACK_DEPLOYMENT_MODE: "authenticated", COPYBACK_WEB_RENDER_CACHE: "on" })).toBe(false);
    expect(renderCacheEnabled({})).toBe(false);
    expect(() => renderCacheEnabled({ COPYBACK_WEB_RENDER_CACHE: "yes" })).toThrow(/on" or "off/);
  });
});

describe("cacheKeyOf: only the local board's GETs of the board and the issue page", () => {
  it("uses the app's console cookie (name and value)", () => {
    expect(LOCAL_CONSOLE_COOKIE).toBe(APP_COOKIE);
    expect(cacheKeyOf(request(BOARD), SECRET)).not.toBeNull();
  });

  it("scopes the board and an issue page", () => {
    expect(cacheKeyOf(request(`${BOARD}?status=todo`), SECRET)?.scope).toBe("boards");
    expect(cacheKeyOf(request(`${BOARD}/${ISSUE}`), SECRET)?.scope).toBe(`issue:${ISSUE}`);
  });

  it("passes every other page, route and method through", () => {
    for (const url of [`/companies/${COMPANY}/members`, `/companies/${COMPANY}/recovery`, `/companies/${COMPANY}/runs/${ISSUE}`, "/api/trpc/issues.list", `${BOARD}/${ISSUE}/x`, `/companies/acme/issues`, "/"])
      expect(cacheKeyOf(request(url), SECRET)).toBeNull();
    expect(cacheKeyOf(request(BOARD, {}, "POST"), SECRET)).toBeNull();
    expect(cacheKeyOf(request(BOARD, {}, "HEAD"), SECRET)).toBeNull();
  });

  it("never keys another viewer: API keys, other or extra cookies, another secret's cookie, no cookie", () => {
    expect(cacheKeyOf(request(BOARD, { authorization: "Bearer cbk_x" }), SECRET)).toBeNull();
    expect(cacheKeyOf(request(BOARD, { cookie: `${cookie}; better-auth.session_token=abc` }), SECRET)).toBeNull();
    expect(cacheKeyOf(request(BOARD, { cookie: `${APP_COOKIE}=${consoleCookieValue("another secret")}` }), SECRET)).toBeNull();
    expect(cacheKeyOf(request(BOARD, { cookie: "better-auth.session_token=abc" }), SECRET)).toBeNull();
    expect(cacheKeyOf({ method: "GET", url: BOARD, headers: { host: "127.0.0.1" } }, SECRET)).toBeNull();
    expect(cacheKeyOf(request(BOARD), "")).toBeNull();
  });

  it("keys the URL, Host and each header the answer varies on", () => {
    const base = cacheKeyOf(request(BOARD), SECRET)!.key;
    const variants = [
      request(`${BOARD}?status=todo`),
      request(BOARD, { host: "localhost:3100" }),
      request(BOARD, { rsc: "1" }),
      request(BOARD, { rsc: "1", "next-router-state-tree": "%5B%22%22%5D" }),
      request(BOARD, { "next-router-prefetch": "1" }),
      request(BOARD, { "next-router-segment-prefetch": "/_tree" }),
      request(BOARD, { "next-url": "/x" }),
      request(BOARD, { accept: "text/x-component" }),
      request(BOARD, { "accept-encoding": "gzip" }),
      request(BOARD, { "x-forwarded-proto": "https" }),
    ];
    const keys = variants.map((variant) => cacheKeyOf(variant, SECRET)!.key);
    expect(new Set([base, ...keys]).size).toBe(keys.length + 1);
    expect(cacheKeyOf(request(BOARD, { "user-agent": "another browser" }), SECRET)!.key).toBe(base);
  });
});

describe("storableHeaders", () => {
  const page = { "content-type": "text/html; charset=utf-8", vary: "rsc, next-router-state-tree, next-router-prefetch, next-router-segment-prefetch", date: "x", connection: "keep-alive", "transfer-encoding": "chunked", "content-length": 10 };

  it("keeps a 200's headers without the connection's own", () => {
    expect(storableHeaders(200, page)).toEqual({ "content-type": "text/html; charset=utf-8", vary: page.vary });
  });

  it("refuses other statuses, Set-Cookie, and a Vary on a header outside the key", () => {
    expect(storableHeaders(307, page)).toBeNull();
    expect(storableHeaders(404, page)).toBeNull();
    expect(storableHeaders(200, { ...page, "set-cookie": ["a=b"] })).toBeNull();
    expect(storableHeaders(200, { ...page, vary: "rsc, cookie" })).toBeNull();
  });
});

describe("scopeOfNotification", () => {
  const event = (fields: Record<string, unknown>) => JSON.stringify({ companyId: COMPANY, id: randomUUID(), issueId: null, runId: null, op: "UPDATE", ...fields });

  it("an issue's own row, and new rows of an issue, drop the boards and that issue", () => {
    for (const op of ["INSERT", "UPDATE", "DELETE"]) expect(scopeOfNotification(event({ entity: "issues", op, id: ISSUE, issueId: ISSUE }))).toEqual({ all: false, issueId: ISSUE });
    for (const entity of ["issue_messages", "heartbeat_runs", "issue_recovery_actions", "run_events", "activity_log", "reconstruction_intents", "issue_attachments"])
      expect(scopeOfNotification(event({ entity, op: "INSERT", issueId: ISSUE }))).toEqual({ all: false, issueId: ISSUE });
  });

  it("anything else drops everything", () => {
    // An updated child row may have moved from another issue, whose page the payload does not
    // name; a deleted one may be referred to from another issue's rows.
    expect(scopeOfNotification(event({ entity: "issue_messages", op: "UPDATE", issueId: ISSUE })).all).toBe(true);
    expect(scopeOfNotification(event({ entity: "heartbeat_runs", op: "DELETE", issueId: ISSUE })).all).toBe(true);
    expect(scopeOfNotification(event({ entity: "heartbeat_runs", op: "INSERT", issueId: null })).all).toBe(true);
    for (const entity of ["agents", "companies", "users", "native_run_results", "environment_leases", "workspace_operations", "something_new"])
      expect(scopeOfNotification(event({ entity, op: "INSERT" })).all).toBe(true);
    expect(scopeOfNotification(event({ entity: "issues", id: randomUUID(), issueId: ISSUE })).all).toBe(true);
    expect(scopeOfNotification("not json").all).toBe(true);
    expect(scopeOfNotification(undefined).all).toBe(true);
    expect(scopeOfNotification(event({ entity: "issues", issueId: "'; drop" })).all).toBe(true);
  });
});

describe("RenderCache", () => {
  const body = Buffer.from("<html>board</html>");
  const listening = (now = () => 0) => {
    const cache = new RenderCache({ now });
    cache.setListening(true);
    return cache;
  };

  it("serves what was stored while nothing of its scope was dropped", () => {
    const cache = listening();
    const version = cache.versionOf("boards");
    expect(cache.store("k", "boards", version, 200, {}, body)).toBe(true);
    expect(cache.get("k")?.body).toBe(body);
  });

  it("does not store a render during which its scope, or everything, was dropped", () => {
    const cache = listening();
    const version = cache.versionOf("boards");
    cache.dropScope("boards");
    expect(cache.store("k", "boards", version, 200, {}, body)).toBe(false);
    const again = cache.versionOf("boards");
    cache.applyNotification("garbage");
    expect(cache.store("k", "boards", again, 200, {}, body)).toBe(false);
    expect(cache.get("k")).toBeUndefined();
  });

  it("an issue's notification drops the boards and that issue's page, not other issues' pages", () => {
    const cache = listening();
    const other = randomUUID();
    cache.store("board", "boards", cache.versionOf("boards"), 200, {}, body);
    cache.store("issue", `issue:${ISSUE}`, cache.versionOf(`issue:${ISSUE}`), 200, {}, body);
    cache.store("other", `issue:${other}`, cache.versionOf(`issue:${other}`), 200, {}, body);
    const otherVersion = cache.versionOf(`issue:${other}`);
    cache.applyNotification(JSON.stringify({ entity: "issues", id: ISSUE, issueId: ISSUE, op: "UPDATE" }));
    expect(cache.get("board")).toBeUndefined();
    expect(cache.get("issue")).toBeUndefined();
    expect(cache.get("other")).toBeDefined();
    expect(cache.versionOf(`issue:${other}`)).toBe(otherVersion);
  });

  it("serves and stores nothing while the LISTEN connection is down, and forgets everything on either transition", () => {
    const cache = listening();
    cache.store("k", "boards", cache.versionOf("boards"), 200, {}, body);
    const version = cache.versionOf("boards");
    cache.setListening(false);
    expect(cache.get("k")).toBeUndefined();
    expect(cache.store("k", "boards", cache.versionOf("boards"), 200, {}, body)).toBe(false);
    cache.setListening(true);
    expect(cache.store("k", "boards", version, 200, {}, body)).toBe(false);
    expect(cache.get("k")).toBeUndefined();
  });

  it("lets entries expire after TTL_MS (relative timestamps age)", () => {
    let now = 1_000;
    const cache = listening(() => now);
    cache.store("k", "boards", cache.versionOf("boards"), 200, {}, body);
    now += TTL_MS - 1;
    expect(cache.get("k")).toBeDefined();
    now += 1;
    expect(cache.get("k")).toBeUndefined();
    expect(cache.bytes).toBe(0);
  });

  it("keeps at most MAX_ENTRIES, dropping the least recently used", () => {
    const cache = listening();
    for (let i = 0; i <= MAX_ENTRIES; i++) cache.store(`k${i}`, "boards", cache.versionOf("boards"), 200, {}, body);
    expect(cache.entries.size).toBe(MAX_ENTRIES);
    expect(cache.get("k0")).toBeUndefined();
    expect(cache.get(`k${MAX_ENTRIES}`)).toBeDefined();
  });
});
