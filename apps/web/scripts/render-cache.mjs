// The console's render cache: answers of the issues board kept in memory per web
// process and served again until anything the console shows changes. Pure: no I/O here; the
// server (cached-next-server.mjs) feeds it requests, responses and change notifications
// (change-listener.mjs).
//
// Why: on two cores, 20 readers at once need ~150 board answers a second, and Next.js's render of
// one board page costs more CPU than that allows (README "Console benchmarks"). Most answers are
// the same bytes as the previous one: the board changes when its rows change.
//
// What makes a cached answer correct to serve:
//   - Only the trusted local board's answers are kept (local mode, the console cookie of this
//     process's secret as the request's only credential, no Authorization header). The local
//     board's principal and permissions are fixed for the process's lifetime (its cookie is an
//     HMAC of the secret), so the key needs no identity beyond "the local board"; every other
//     request (API keys, sessions, anonymous, other cookies) passes through uncached.
//   - The key is everything the answer depends on in the request: Host (resolve-principal trusts
//     loopback Host names only, so an answer is never replayed to another Host), the URL with its
//     query, each header Next.js varies the answer on (RSC, router state tree, prefetch, segment
//     prefetch, Next-Url), Accept and Accept-Encoding, and the headers the app reads besides the
//     credentials (X-Forwarded-Proto for the console's origin in recovery guidance; Origin and
//     Sec-Fetch-Site, which only mutations check). A response whose Vary names any other header
//     is not stored.
//   - Only two pages are cached, the issues board (/companies/<id>/issues) and the issue page
//     (/companies/<id>/issues/<id>), the pages readers keep open: every table they read announces
//     its changes on `copyback_events` (issues, issue_messages, heartbeat_runs,
//     issue_recovery_actions by the migration live_notifications; companies, agents, users,
//     native_run_results, environment_leases, workspace_operations by console_cache_notifications).
//     A page added to the cached pages must have the same property.
//   - Every notification on the channel drops entries (scopeOfNotification): a change of an issue
//     row, or a new message, run, run event, recovery action or activity entry of an issue, drops
//     every board page (of every company: the payload names the new row only) and that issue's
//     page; anything else drops every entry: other tables, updates and deletions of child rows (an
//     update could have moved one from another issue, and another issue's rows may refer to an
//     existing one), payloads without an issue, unreadable payloads. A new row can show on another
//     issue's page only through a row that refers to it, whose own insert or update announces
//     itself. So do the loss and the re-establishment of the LISTEN connection, and while it is
//     down nothing is served or stored. An answer is stored only if nothing of its scope was
//     dropped while it was rendered (the version it started with is still current), so a render
//     that read the rows before a change never outlives that change's notification.
//   - Before a hit is served, the listener fences: a query on the LISTEN connection, sent after
//     the request arrived. PostgreSQL signals listeners at commit, before the writer hears that
//     its commit succeeded, and delivers the notification ahead of a later query's answer; so any
//     change committed before the request arrived has dropped the entry by the time the fence
//     answers (a change is visible on the very next request).
//   - Entries expire after TTL_MS anyway: the board's relative timestamps ("5 minutes ago") are
//     words of the moment of rendering.
import { createHash, timingSafeEqual } from "node:crypto";
import { consoleCookieValue, LOCAL_CONSOLE_COOKIE } from "../src/server/auth/console-cookie.mjs";

/** How long an entry is served at most (its relative timestamps age). */
export const TTL_MS = 10_000;
/** Bounds of the store: entries, bytes per entry, bytes in all. */
export const MAX_ENTRIES = 500;
export const MAX_ENTRY_BYTES = 1024 * 1024;
export const MAX_TOTAL_BYTES = 64 * 1024 * 1024;

/** The local console cookie, from the module the app's sign-in uses too. */
export { LOCAL_CONSOLE_COOKIE };

/** The request headers an answer may depend on besides the URL; part of every key. */
export const KEYED_HEADERS = [
  "host",
  "rsc",
  "next-router-state-tree",
  "next-router-prefetch",
  "next-router-segment-prefetch",
  "next-url",
  "accept",
  "accept-encoding",
  "x-forwarded-proto",
  "origin",
  "sec-fetch-site",
];

/** Response headers never replayed: they belong to one connection or are recomputed. */
const CONNECTION_HEADERS = new Set(["date", "connection", "keep-alive", "transfer-encoding", "content-length"]);

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
// The cached pages: the board and the issue page (see the file comment for what one must satisfy).
const BOARD = new RegExp(`^/companies/${UUID}/issues$`);
const ISSUE_PAGE = new RegExp(`^/companies/${UUID}/issues/(${UUID})$`);
const BOARDS = "boards";
/** Scopes remembered before everything is dropped instead (their versions must not be forgotten while entries may use them). */
const MAX_SCOPES = 10_000;

/**
 * Is the render cache on for this process? Local mode only (the only mode with one fixed
 * principal); COPYBACK_WEB_RENDER_CACHE=off turns it off, "on" is the default there.
 * @param {Readonly<Record<string, string | undefined>>} env
 * @returns {boolean}
 */
export function renderCacheEnabled(env) {
  const requested = env.COPYBACK_WEB_RENDER_CACHE?.trim();
  if (requested && requested !== "on" && requested !== "off")
    throw new Error(`COPYBACK_WEB_RENDER_CACHE must be "on" or "off" (got "${requested}")`);
  if ((env.COPYBACK_DEPLOYMENT_MODE ?? "local") !== "local") return false;
  if (!env.COPYBACK_CONSOLE_SECRET) return false;
  return requested !== "off";
}

const digest = (value) => createHash("sha256").update(value, "utf8").digest();

/**
 * The key and scope of a request whose answer may be cached, or null when it must be rendered.
 * The scope is what drops it: "boards", or "issue:<id>" for an issue page.
 * @param {{ method?: string; url?: string; headers: Record<string, string | string[] | undefined> }} request
 * @param {string} consoleSecret
 * @returns {{ key: string; scope: string } | null}
 */
export function cacheKeyOf(request, consoleSecret) {
  if (request.method !== "GET" || !request.url) return null;
  const query = request.url.indexOf("?");
  const path = query === -1 ? request.url : request.url.slice(0, query);
  const page = ISSUE_PAGE.exec(path);
  if (!page && !BOARD.test(path)) return null;
  const headers = request.headers;
  if (headers.authorization !== undefined) return null;
  if (!isOnlyTheConsoleCookie(headers.cookie, consoleSecret)) return null;
  const parts = [request.url];
  for (const name of KEYED_HEADERS) {
    const value = headers[name];
    if (Array.isArray(value)) return null;
    parts.push(value ?? "");
  }
  return { key: JSON.stringify(parts), scope: page ? `issue:${page[1]}` : BOARDS };
}

/** Entities whose notification names the issue a row belongs to (migrations live_notifications, reconstruction_intents_live_notify, issue_attachments_live_notify). */
const ISSUE_CHILD_ENTITIES = new Set(["issue_messages", "heartbeat_runs", "issue_recovery_actions", "run_events", "activity_log", "reconstruction_intents", "issue_attachments"]);
const UUID_ONLY = new RegExp(`^${UUID}$`);

/**
 * What a `copyback_events` notification drops: the boards and one issue's page, or everything
 * (see the file comment).
 * @param {string | undefined} payload
 * @returns {{ all: true } | { all: false; issueId: string }}
 */
export function scopeOfNotification(payload) {
  let event;
  try {
    event = JSON.parse(payload ?? "");
  } catch {
    return { all: true };
  }
  const issueId = event?.issueId;
  if (typeof issueId !== "string" || !UUID_ONLY.test(issueId)) return { all: true };
  // An issue's own row cannot move to another issue; a child row's UPDATE could (the payload
  // names only its new issue), and a deleted one may be referred to from elsewhere.
  if (event.entity === "issues" && event.id === issueId) return { all: false, issueId };
  if (ISSUE_CHILD_ENTITIES.has(event.entity) && event.op === "INSERT") return { all: false, issueId };
  return { all: true };
}

/** Exactly one cookie, the console cookie of this secret (compared in constant time). */
function isOnlyTheConsoleCookie(cookieHeader, secret) {
  if (typeof cookieHeader !== "string" || !secret) return false;
  const parts = cookieHeader.split(";");
  if (parts.length !== 1) return false;
  const eq = parts[0].indexOf("=");
  if (eq === -1 || parts[0].slice(0, eq).trim() !== LOCAL_CONSOLE_COOKIE) return false;
  const expected = consoleCookieValue(secret);
  return timingSafeEqual(digest(parts[0].slice(eq + 1).trim()), digest(expected));
}

/**
 * The response headers to replay, or null when this response must not be stored.
 * @param {number} status
 * @param {Record<string, string | string[] | number | undefined>} headers lower-case names
 * @returns {Record<string, string | string[]> | null}
 */
export function storableHeaders(status, headers) {
  if (status !== 200) return null;
  if (headers["set-cookie"] !== undefined) return null;
  const vary = headers.vary;
  if (vary !== undefined) {
    const names = (Array.isArray(vary) ? vary.join(",") : String(vary)).split(",").map((n) => n.trim().toLowerCase()).filter(Boolean);
    if (names.some((name) => !KEYED_HEADERS.includes(name))) return null;
  }
  /** @type {Record<string, string | string[]>} */
  const kept = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || CONNECTION_HEADERS.has(name)) continue;
    kept[name] = Array.isArray(value) ? value : String(value);
  }
  return kept;
}

/**
 * The store. Versions count drops: a render remembers its scope's version at the start and
 * stores only if it is unchanged at the end; `generation` counts the drops of everything.
 */
export class RenderCache {
  /** @param {{ now?: () => number }} [options] */
  constructor(options = {}) {
    this.now = options.now ?? Date.now;
    /** @type {Map<string, { scope: string; status: number; headers: Record<string, string | string[]>; body: Buffer; storedAt: number }>} */
    this.entries = new Map();
    this.bytes = 0;
    this.generation = 0;
    /** @type {Map<string, number>} drops per scope since the last drop of everything */
    this.scopeDrops = new Map();
    /** False while the LISTEN connection is down: nothing is served or stored. */
    this.listening = false;
    this.stats = { hits: 0, shared: 0, misses: 0, bypassed: 0, stored: 0, drops: 0 };
  }

  /** The version of `scope`: any drop that affects it changes it. */
  versionOf(scope) {
    return `${this.generation}:${this.scopeDrops.get(scope) ?? 0}`;
  }

  /** Drops every entry: a change was announced that may affect any page, or announcements may have been missed. */
  dropAll() {
    this.generation++;
    this.stats.drops++;
    this.scopeDrops.clear();
    this.entries.clear();
    this.bytes = 0;
  }

  /** Drops the entries of one scope. */
  dropScope(scope) {
    if (this.scopeDrops.size >= MAX_SCOPES) return this.dropAll();
    this.stats.drops++;
    this.scopeDrops.set(scope, (this.scopeDrops.get(scope) ?? 0) + 1);
    for (const [key, entry] of this.entries) if (entry.scope === scope) this.remove(key, entry);
  }

  /** Applies one notification's payload (scopeOfNotification). */
  applyNotification(payload) {
    const scope = scopeOfNotification(payload);
    if (scope.all) return this.dropAll();
    this.dropScope(BOARDS);
    this.dropScope(`issue:${scope.issueId}`);
  }

  /** The listener's state; either transition drops everything (notifications may be lost in between). */
  setListening(listening) {
    this.listening = listening;
    this.dropAll();
  }

  /** A fresh entry for `key`, or undefined. */
  get(key) {
    if (!this.listening) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.now() - entry.storedAt >= TTL_MS) {
      this.remove(key, entry);
      return undefined;
    }
    // Least recently used first in the Map's order.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  /**
   * Stores an answer rendered since `version` of `scope`; false (not stored) if its scope was
   * dropped meanwhile, the listener is down, or the answer is too large.
   */
  store(key, scope, version, status, headers, body) {
    if (!this.listening || version !== this.versionOf(scope)) return false;
    if (body.length > MAX_ENTRY_BYTES) return false;
    const previous = this.entries.get(key);
    if (previous) this.remove(key, previous);
    this.entries.set(key, { scope, status, headers, body, storedAt: this.now() });
    this.bytes += body.length;
    while (this.entries.size > MAX_ENTRIES || this.bytes > MAX_TOTAL_BYTES) {
      const [oldestKey, oldest] = this.entries.entries().next().value;
      this.remove(oldestKey, oldest);
    }
    this.stats.stored++;
    return true;
  }

  remove(key, entry) {
    this.entries.delete(key);
    this.bytes -= entry.body.length;
  }
}
