// Live updates end to end on the server side: a plain SQL write (as the worker makes it) goes
// through the trigger, the process's one LISTEN connection and the hub, and comes out of
// GET /api/events as a server-sent event — for subscribers of that company only.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "@copyback/core/auth";
import { useTestDatabase } from "@copyback/db/testing";
import { createLiveFeed, type LiveFeed } from "~/server/live/live-feed";
import { handleLiveEventsRequest } from "~/server/live/events-handler";
import type { EventStreamCloseReason } from "~/server/live/event-stream";
import { CONSOLE_COOKIE, CONSOLE_SECRET } from "./auth-fixture";

const db = useTestDatabase();
let sql: pg.Client;
let feed: LiveFeed;

const ACME = randomUUID();
const GLOBEX = randomUUID();
const acmeIssue = randomUUID();
const globexIssue = randomUUID();

const member = (companyId: string, status: "active" | "suspended" = "active"): Principal => ({
  kind: "board_user",
  userId: randomUUID(),
  isInstanceAdmin: false,
  memberships: [{ companyId, role: "member", status }],
  via: "session",
});

beforeAll(async () => {
  sql = new pg.Client({ connectionString: db.url() });
  await sql.connect();
  await sql.query(
    `INSERT INTO companies (id, name, issue_prefix, updated_at) VALUES ($1, 'Acme', 'ACME', now()), ($2, 'Globex', 'GLX', now())`,
    [ACME, GLOBEX],
  );
  await sql.query(
    `INSERT INTO issues (id, company_id, number, identifier, title, updated_at)
     VALUES ($1, $2, 1, 'ACME-1', 'Acme task', now()), ($3, $4, 1, 'GLX-1', 'Globex task', now())`,
    [acmeIssue, ACME, globexIssue, GLOBEX],
  );
  feed = createLiveFeed({
    databaseUrl: db.url(),
    backoff: { initialMs: 20, maxMs: 200 },
    applicationName: "copyback-live-test",
  });
});

afterAll(async () => {
  await feed?.stop();
  await sql?.end();
});

interface SseEvent {
  event: string;
  data: string;
}

/** Opens /api/events through the handler as `principal` and parses what it streams. */
async function subscribe(
  principal: Principal | (() => Principal),
  companyId: string,
  options: { reauthorizeMs?: number } = {},
) {
  const abort = new AbortController();
  const closes: EventStreamCloseReason[] = [];
  const response = await handleLiveEventsRequest(
    new Request(`http://localhost/api/events?companyId=${companyId}`, { signal: abort.signal }),
    {
      db: db.prisma(),
      feed,
      resolvePrincipal: async () => (typeof principal === "function" ? principal() : principal),
      reauthorizeMs: options.reauthorizeMs,
      onClose: (reason) => closes.push(reason),
    },
  );
  const events: SseEvent[] = [];
  let ended = false;
  if (response.ok && response.body) void pump(response.body, events).finally(() => (ended = true));
  return {
    response,
    events,
    closes,
    ended: () => ended,
    close: () => abort.abort(),
    async next(predicate: (e: SseEvent) => boolean, timeoutMs = 2_000): Promise<SseEvent> {
      const started = Date.now();
      for (;;) {
        const found = events.find(predicate);
        if (found) return found;
        if (Date.now() - started > timeoutMs)
          throw new Error(
            `no matching event within ${timeoutMs} ms; got ${JSON.stringify(events)}`,
          );
        await sleep(10);
      }
    },
  };
}

async function pump(body: ReadableStream<Uint8Array>, into: SseEvent[]) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = [...block.matchAll(/^data: (.*)$/gm)].map((m) => m[1]).join("\n");
      if (event) into.push({ event, data });
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isChangeOf = (id: string) => (e: SseEvent) =>
  e.event === "change" && JSON.parse(e.data).id === id;

describe("GET /api/events", () => {
  it("pushes a plain SQL UPDATE of an issue to its company's subscriber within 2 s, and not to another company's", async () => {
    const acme = await subscribe(member(ACME), ACME);
    const globex = await subscribe(member(GLOBEX), GLOBEX);
    try {
      expect(acme.response.status).toBe(200);
      expect(acme.response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expect(acme.response.headers.get("cache-control")).toContain("no-transform");
      await acme.next((e) => e.event === "ready");
      await feed.ready();

      const started = Date.now();
      await sql.query(
        "UPDATE issues SET status = 'in_progress', title = 'Renamed by the worker' WHERE id = $1",
        [acmeIssue],
      );
      const change = await acme.next(isChangeOf(acmeIssue), 2_000);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(JSON.parse(change.data)).toEqual({
        entity: "issues",
        id: acmeIssue,
        issueId: acmeIssue,
        runId: null,
        op: "UPDATE",
      });
      // Ids only: the new title is read through the authorized API, never pushed.
      expect(change.data).not.toContain("Renamed");

      // A Globex change afterwards: once the Globex subscriber has it, Acme's would have arrived too.
      await sql.query("UPDATE issues SET status = 'todo' WHERE id = $1", [globexIssue]);
      await globex.next(isChangeOf(globexIssue));
      expect(globex.events.filter(isChangeOf(acmeIssue))).toEqual([]);
      expect(acme.events.filter(isChangeOf(globexIssue))).toEqual([]);
    } finally {
      acme.close();
      globex.close();
    }
  });

  it("R-RC-3 R-UI-3: a task's new attachment reaches its company's subscribers with its task, and never another company's", async () => {
    const acme = await subscribe(member(ACME), ACME);
    const globex = await subscribe(member(GLOBEX), GLOBEX);
    try {
      await acme.next((e) => e.event === "ready");
      await globex.next((e) => e.event === "ready");
      await feed.ready();
      const acmeFile = randomUUID();
      const globexFile = randomUUID();
      const insert = `INSERT INTO issue_attachments (id, company_id, issue_id, file_name, content_type, size_bytes, sha256, storage_path)
                      VALUES ($1, $2, $3, 'design.md', 'text/markdown', 3, $4, 'attachments/x')`;
      await sql.query(insert, [acmeFile, ACME, acmeIssue, "a".repeat(64)]);
      await sql.query(insert, [globexFile, GLOBEX, globexIssue, "b".repeat(64)]);
      const change = await acme.next(isChangeOf(acmeFile));
      expect(JSON.parse(change.data)).toEqual({ entity: "issue_attachments", id: acmeFile, issueId: acmeIssue, runId: null, op: "INSERT" });
      // One LISTEN connection delivers in commit order: a misrouted Acme change would be there before Globex's own.
      await globex.next(isChangeOf(globexFile));
      expect(globex.events.filter(isChangeOf(acmeFile))).toEqual([]);
      expect(acme.events.filter(isChangeOf(globexFile))).toEqual([]);
    } finally {
      acme.close();
      globex.close();
    }
  });

  it("keeps one LISTEN connection for all subscribers and releases a subscriber that disconnects", async () => {
    const subscribers = await Promise.all([
      subscribe(member(ACME), ACME),
      subscribe(member(ACME), ACME),
      subscribe(member(GLOBEX), GLOBEX),
    ]);
    await Promise.all(subscribers.map((s) => s.next((e) => e.event === "ready")));
    const listening = await sql.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'copyback-live-test' AND datname = current_database()",
    );
    expect(listening.rows[0].n).toBe(1);
    expect(feed.subscriberCount()).toBe(3);
    for (const s of subscribers) s.close();
    expect(feed.subscriberCount()).toBe(0);
    expect(subscribers.every((s) => s.closes[0] === "client_gone")).toBe(true);
  });

  it("survives a dropped LISTEN connection: resubscribes, tells subscribers to resync, and delivers again", async () => {
    const acme = await subscribe(member(ACME), ACME);
    try {
      await acme.next((e) => e.event === "ready");
      await feed.ready();
      const pid = feed.backendPid();
      expect(pid).toBeGreaterThan(0);

      await sql.query("SELECT pg_terminate_backend($1)", [pid]);
      await acme.next((e) => e.event === "status" && JSON.parse(e.data).listening === false, 5_000);
      await acme.next((e) => e.event === "resync", 5_000);
      expect(feed.isListening()).toBe(true);
      expect(feed.backendPid()).not.toBe(pid);

      const message = randomUUID();
      await sql.query(
        "INSERT INTO issue_messages (id, company_id, issue_id, author_type, body) VALUES ($1, $2, $3, 'system', 'after the drop')",
        [message, ACME, acmeIssue],
      );
      const change = await acme.next(isChangeOf(message));
      expect(JSON.parse(change.data)).toMatchObject({
        entity: "issue_messages",
        issueId: acmeIssue,
        op: "INSERT",
      });
    } finally {
      acme.close();
    }
  });

  it("ends the stream when the subscriber's membership is suspended meanwhile", async () => {
    let principal = member(ACME);
    const acme = await subscribe(() => principal, ACME, { reauthorizeMs: 100 });
    await acme.next((e) => e.event === "ready");
    principal = member(ACME, "suspended");
    await acme.next((e) => e.event === "denied", 2_000);
    await sleep(50);
    expect(acme.ended()).toBe(true);
    expect(acme.closes).toEqual(["denied"]);
    expect(feed.subscriberCount(ACME)).toBe(0);
  });

  it.each([
    ["anonymous", { kind: "anonymous" } as Principal, () => ACME, 401, "unauthenticated"],
    ["another company's owner", member(GLOBEX), () => ACME, 404, "not_found"],
    ["a suspended member", member(ACME, "suspended"), () => ACME, 403, "forbidden"],
    [
      "the local board, for a company that does not exist",
      { kind: "local_board" } as Principal,
      () => randomUUID(),
      404,
      "not_found",
    ],
    [
      "an agent",
      { kind: "agent", agentId: randomUUID(), companyId: ACME, keyId: randomUUID() } as Principal,
      () => ACME,
      403,
      "forbidden",
    ],
  ])(
    "refuses %s with a JSON error and subscribes nothing",
    async (_name, principal, companyId, status, code) => {
      const before = feed.subscriberCount();
      const attempt = await subscribe(principal, companyId());
      expect(attempt.response.status).toBe(status);
      expect(attempt.response.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await attempt.response.json()).toMatchObject({ code });
      expect(feed.subscriberCount()).toBe(before);
    },
  );

  it.each([
    ["missing", ""],
    ["not a uuid", "acme"],
    ["an injection attempt", `${ACME}'--`],
  ])("answers 422 for a companyId that is %s", async (_name, companyId) => {
    const response = await handleLiveEventsRequest(
      new Request(
        `http://localhost/api/events${companyId ? `?companyId=${encodeURIComponent(companyId)}` : ""}`,
      ),
      {
        db: db.prisma(),
        feed,
        resolvePrincipal: async () => ({ kind: "local_board" }),
      },
    );
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ code: "invalid_request" });
    expect(feed.subscriberCount()).toBe(0);
  });
});

describe("the /api/events route module", () => {
  it("streams in local mode on the process's own feed", async () => {
    process.env.DATABASE_URL = db.url();
    process.env.COPYBACK_DEPLOYMENT_MODE = "local";
    process.env.COPYBACK_CONSOLE_SECRET = CONSOLE_SECRET;
    const { GET } = await import("~/app/api/events/route");
    const { liveFeed } = await import("~/server/live/process-feed");
    const abort = new AbortController();
    try {
      const response = await GET(
        new Request(`http://localhost/api/events?companyId=${ACME}`, { signal: abort.signal, headers: CONSOLE_COOKIE }),
      );
      expect(response.status).toBe(200);
      const events: SseEvent[] = [];
      void pump(response.body!, events);
      await liveFeed().ready();
      await sql.query("UPDATE issues SET title = 'Through the route' WHERE id = $1", [acmeIssue]);
      const started = Date.now();
      while (!events.some(isChangeOf(acmeIssue))) {
        if (Date.now() - started > 2_000)
          throw new Error(`no change event: ${JSON.stringify(events)}`);
        await sleep(10);
      }
      expect(liveFeed()).toBe(liveFeed());
    } finally {
      abort.abort();
      await liveFeed().stop();
    }
  });
});
