// The render cache end to end on a real PostgreSQL (scripts/cached-next-server.mjs's handler,
// change-listener.mjs, the console_cache_notifications triggers): a committed change is visible on
// the very next request, no other viewer is served the local board's answer, and a lost LISTEN
// connection stops the cache until it is back. Next.js is replaced by a handler that renders the
// rows it reads, so a stale answer shows.
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { LOCAL_CONSOLE_COOKIE, consoleCookieValue } from "~/server/auth/local-console";
import { CACHE_HEADER, cachingHandler } from "../scripts/cached-next-server.mjs";
import { startChangeListener } from "../scripts/change-listener.mjs";
import { RenderCache } from "../scripts/render-cache.mjs";

const db = useTestDatabase();
const SECRET = "render-cache-integration-secret-0123456789abcdef";
const COOKIE = `${LOCAL_CONSOLE_COOKIE}=${consoleCookieValue(SECRET)}`;
const COMPANY = randomUUID();
const ISSUE = randomUUID();
const AGENT = randomUUID();
const USER = randomUUID();
const BOARD = `/companies/${COMPANY}/issues`;
const ISSUE_PAGE = `${BOARD}/${ISSUE}`;

let sql: pg.Client;
let reader: pg.Pool;
let cache: RenderCache;
let listener: ReturnType<typeof startChangeListener>;
let server: http.Server;
let base: string;
let renders = 0;

/** Stands in for Next.js: renders what the pages show from the database, and who asked. */
async function renderPage(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  renders++;
  const { rows } = await reader.query(
    `SELECT c.name AS company, i.title, a.name AS agent, u.name AS creator
     FROM issues i JOIN companies c ON c.id = i.company_id
     LEFT JOIN agents a ON a.id = i.assignee_agent_id LEFT JOIN users u ON u.id = i.created_by_user_id
     WHERE i.id = $1`,
    [ISSUE],
  );
  const row = rows[0] as { company: string; title: string; agent: string; creator: string };
  res.setHeader("content-type", "text/html; charset=utf-8");
  res.setHeader("vary", "rsc, next-router-state-tree");
  res.write(`<p>${row.company}|${row.title}|${row.agent}|${row.creator}</p>`);
  res.end(`<p>viewer ${req.headers.authorization ?? req.headers.cookie ?? "anonymous"}</p>`);
}

async function get(path: string, headers: Record<string, string> = { cookie: COOKIE }): Promise<{ body: string; cache: string | null }> {
  const response = await fetch(`${base}${path}`, { headers });
  return { body: await response.text(), cache: response.headers.get(CACHE_HEADER) };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  sql = new pg.Client({ connectionString: db.url() });
  await sql.connect();
  reader = new pg.Pool({ connectionString: db.url(), max: 2 });
  await sql.query(`INSERT INTO companies (id, name, issue_prefix, updated_at) VALUES ($1, 'Acme', 'ACME', now())`, [COMPANY]);
  await sql.query(`INSERT INTO users (id, name, email, updated_at) VALUES ($1, 'Ada', 'ada@acme.test', now())`, [USER]);
  await sql.query(`INSERT INTO agents (id, company_id, name, command, updated_at) VALUES ($1, $2, 'Builder', '{/bin/true}', now())`, [AGENT, COMPANY]);
  await sql.query(
    `INSERT INTO issues (id, company_id, number, identifier, title, assignee_agent_id, created_by_user_id, updated_at)
     VALUES ($1, $2, 1, 'ACME-1', 'First title', $3, $4, now())`,
    [ISSUE, COMPANY, AGENT, USER],
  );
  cache = new RenderCache();
  listener = startChangeListener({ databaseUrl: db.url(), cache, log: () => {}, retryMs: { first: 50, max: 200 } });
  server = http.createServer(cachingHandler({ handle: renderPage, cache, fence: listener.fence, consoleSecret: SECRET }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await until(() => cache.listening, "the LISTEN connection");
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await listener?.stop();
  await reader?.end();
  await sql?.end();
});

describe("render cache", () => {
  it("answers a repeated request from the cache", async () => {
    const first = await get(BOARD);
    const again = await get(BOARD);
    expect(first.cache).toBe("miss");
    expect(again).toEqual({ body: first.body, cache: "hit" });
  });

  it("shows a change committed by another connection on the very next request, every time", async () => {
    for (let i = 0; i < 40; i++) {
      const title = `Title ${i}`;
      await get(BOARD);
      await get(ISSUE_PAGE);
      await sql.query("UPDATE issues SET title = $1 WHERE id = $2", [title, ISSUE]);
      const board = await get(BOARD);
      const page = await get(ISSUE_PAGE);
      expect(board.body).toContain(`|${title}|`);
      expect(page.body).toContain(`|${title}|`);
    }
    // ...and the answers after the change are cached again.
    expect((await get(BOARD)).cache).toBe("hit");
  });

  it("drops answers when the company, an agent or a user changes (console_cache_notifications)", async () => {
    const changes = [
      ["UPDATE companies SET name = 'Acme Robotics' WHERE id = $1", COMPANY, "Acme Robotics|"],
      ["UPDATE agents SET name = 'Reviewer' WHERE id = $1", AGENT, "|Reviewer|"],
      ["UPDATE users SET name = 'Grace' WHERE id = $1", USER, "|Grace</p>"],
    ] as const;
    for (const [statement, id, shown] of changes) {
      await get(ISSUE_PAGE);
      expect((await get(ISSUE_PAGE)).cache).toBe("hit");
      await sql.query(statement, [id]);
      const after = await get(ISSUE_PAGE);
      expect(after.body).toContain(shown);
    }
  });

  it("has a trigger on every table the cached pages read that live_notifications does not announce", async () => {
    const { rows } = await sql.query<{ relname: string }>(
      `SELECT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       WHERE NOT t.tgisinternal AND t.tgname LIKE '%\\_console\\_notify' ORDER BY c.relname`,
    );
    expect(rows.map((row) => row.relname)).toEqual(["agents", "companies", "environment_leases", "native_run_results", "users", "workspace_operations"]);
  });

  it("never serves the local board's answer to another viewer, nor keeps theirs", async () => {
    await get(BOARD);
    expect((await get(BOARD)).cache).toBe("hit");
    const viewers: { authorization?: string; cookie?: string }[] = [{ authorization: "Bearer cbk_someone" }, { cookie: "better-auth.session_token=abc" }, { cookie: `${COOKIE}; other=1` }, { cookie: `${LOCAL_CONSOLE_COOKIE}=${consoleCookieValue("another secret")}` }, {}];
    for (const headers of viewers) {
      const before = renders;
      const answer = await get(BOARD, Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined)));
      expect(answer.cache).toBeNull();
      expect(renders).toBe(before + 1);
      expect(answer.body).toContain(`viewer ${headers.authorization ?? headers.cookie ?? "anonymous"}`);
    }
  });

  it("serves nothing from the cache while the LISTEN connection is lost, and starts empty when it is back", async () => {
    await get(BOARD);
    expect((await get(BOARD)).cache).toBe("hit");
    await sql.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'copyback-web-render-cache'");
    await until(() => !cache.listening, "the lost connection to be noticed");
    // Down, or already back with nothing in it: either way the answer is rendered.
    expect((await get(BOARD)).cache).toBe("miss");
    await until(() => cache.listening, "the LISTEN connection to be back");
    await get(BOARD);
    expect((await get(BOARD)).cache).toBe("hit");
  });
});
