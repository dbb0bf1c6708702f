// The live_notifications migration and the LISTEN connection, against a real PostgreSQL:
// triggers announce changes of every writer (here plain SQL, as the worker or a script would),
// ids only; the listener survives its connection being killed.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../testing";
import { driftFromSchema } from "../migrate/schema-diff";
import { LIVE_EVENTS_CHANNEL, parseLiveEvent, type LiveEvent } from "./live-event";
import { LIVE_NOTIFY_FUNCTION, LIVE_NOTIFY_TRIGGERS } from "./triggers";
import { startNotificationListener, type NotificationListener } from "./listener";

const db = useTestDatabase();
let sql: pg.Client;

const company = randomUUID();
const otherCompany = randomUUID();
const agent = randomUUID();
const issue = randomUUID();
const run = randomUUID();

beforeAll(async () => {
  sql = new pg.Client({ connectionString: db.url() });
  await sql.connect();
  await sql.query(
    `INSERT INTO companies (id, name, issue_prefix, updated_at) VALUES ($1, 'Acme', 'ACME', now()), ($2, 'Globex', 'GLX', now());
     INSERT INTO agents (id, company_id, name, command, updated_at) VALUES ($3, $1, 'Builder', ARRAY['true'], now());
     INSERT INTO issues (id, company_id, number, identifier, title, updated_at) VALUES ($4, $1, 1, 'ACME-1', 'Secret title', now());
     INSERT INTO heartbeat_runs (id, company_id, agent_id, native_issue_id, updated_at) VALUES ($5, $1, $3, $4, now());`.replace(
      /\$(\d)/g,
      (_, n: string) => `'${[company, otherCompany, agent, issue, run][Number(n) - 1]}'`,
    ),
  );
});

afterAll(async () => {
  await sql?.end();
});

/** Listens on its own plain connection and collects parsed events. */
async function collector() {
  const client = new pg.Client({ connectionString: db.url() });
  await client.connect();
  const events: LiveEvent[] = [];
  const raw: string[] = [];
  client.on("notification", (message) => {
    raw.push(message.payload ?? "");
    const event = parseLiveEvent(message.payload);
    if (event) events.push(event);
  });
  await client.query(`LISTEN ${LIVE_EVENTS_CHANNEL}`);
  return {
    events,
    raw,
    async next(predicate: (event: LiveEvent) => boolean, timeoutMs = 2_000): Promise<LiveEvent> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find(predicate);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(
            `no matching event within ${timeoutMs} ms; got ${JSON.stringify(events)}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => client.end(),
  };
}

describe("live_notifications migration", () => {
  it("creates the trigger function and one trigger per announced table", async () => {
    const fn = await sql.query("SELECT 1 FROM pg_proc WHERE proname = $1", [LIVE_NOTIFY_FUNCTION]);
    expect(fn.rowCount).toBe(1);
    const triggers = await sql.query<{ tgname: string; relname: string }>(
      `SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       WHERE NOT t.tgisinternal AND t.tgname LIKE '%\\_live\\_notify' ORDER BY t.tgname`,
    );
    expect(triggers.rows.map((row) => `${row.relname}.${row.tgname}`).sort()).toEqual(
      LIVE_NOTIFY_TRIGGERS.map((trigger) => `${trigger.table}.${trigger.name}`).sort(),
    );
  });

  it("leaves the database exactly as schema.prisma describes it (no drift from the hand-written migration)", async () => {
    expect(await driftFromSchema(db.url())).toEqual([]);
  });

  it("announces a plain SQL change of every table with ids only, at commit", async () => {
    const listen = await collector();
    try {
      await sql.query(
        "UPDATE issues SET status = 'in_progress', title = 'Another secret' WHERE id = $1",
        [issue],
      );
      expect(await listen.next((e) => e.entity === "issues")).toEqual({
        companyId: company,
        entity: "issues",
        id: issue,
        issueId: issue,
        runId: null,
        op: "UPDATE",
      });

      const message = randomUUID();
      await sql.query(
        "INSERT INTO issue_messages (id, company_id, issue_id, author_type, run_id, body) VALUES ($1, $2, $3, 'agent', $4, 'Message body')",
        [message, company, issue, run],
      );
      expect(await listen.next((e) => e.id === message)).toMatchObject({
        entity: "issue_messages",
        issueId: issue,
        runId: run,
        op: "INSERT",
      });

      await sql.query(
        "UPDATE heartbeat_runs SET status = 'succeeded', finished_at = now() WHERE id = $1",
        [run],
      );
      expect(await listen.next((e) => e.entity === "heartbeat_runs")).toMatchObject({
        id: run,
        issueId: issue,
        runId: run,
        op: "UPDATE",
      });

      const action = randomUUID();
      await sql.query(
        `INSERT INTO issue_recovery_actions (id, company_id, issue_id, run_id, cause, fingerprint, owner_type, updated_at)
         VALUES ($1, $2, $3, $4, 'native_workspace_finalization_owner_unverified', 'fp', 'board', now())`,
        [action, company, issue, run],
      );
      expect(await listen.next((e) => e.id === action)).toMatchObject({
        entity: "issue_recovery_actions",
        issueId: issue,
        runId: run,
        op: "INSERT",
      });

      const event = randomUUID();
      await sql.query(
        "INSERT INTO run_events (id, company_id, run_id, level, code, message) VALUES ($1, $2, $3, 'info', 'phase', 'Event text')",
        [event, company, run],
      );
      // The run event's issue is looked up through its run, so an issue page can refresh its runs.
      expect(await listen.next((e) => e.id === event)).toMatchObject({
        entity: "run_events",
        issueId: issue,
        runId: run,
      });

      const activity = randomUUID();
      await sql.query(
        "INSERT INTO activity_log (id, company_id, actor_type, action, entity_type, entity_id) VALUES ($1, $2, 'system', 'issue.updated', 'issue', $3)",
        [activity, company, issue],
      );
      expect(await listen.next((e) => e.id === activity)).toMatchObject({
        entity: "activity_log",
        issueId: issue,
        runId: null,
      });

      await sql.query("DELETE FROM issue_messages WHERE id = $1", [message]);
      expect(await listen.next((e) => e.id === message && e.op === "DELETE")).toMatchObject({
        companyId: company,
        issueId: issue,
      });

      // Ids only: no title, body or message text ever travels on the channel.
      for (const payload of listen.raw) {
        expect(payload).not.toMatch(/secret|Message body|Event text/i);
        expect(Buffer.byteLength(payload)).toBeLessThan(8000);
      }
    } finally {
      await listen.close();
    }
  });

  it("R-RC-3 R-RC-5: a reconstruction intent recorded, cancelled and recorded afresh is announced for its company and issue (ids only)", async () => {
    const environment = randomUUID();
    const lease = randomUUID();
    const action = randomUUID();
    const intent = randomUUID();
    await sql.query(
      `INSERT INTO environments (id, company_id, name, provider, plugin_id, updated_at) VALUES ($1, $2, 'local-recon', 'local', 'local', now());
       INSERT INTO environment_leases (id, company_id, environment_id, run_id, issue_id, provider, plugin_id, lease_policy, status, updated_at)
         VALUES ($3, $2, $1, $5, $4, 'local', 'local', 'retain_on_failure', 'destroyed', now());
       INSERT INTO issue_recovery_actions (id, company_id, issue_id, run_id, lease_id, cause, fingerprint, owner_type, updated_at)
         VALUES ($6, $2, $4, $5, $3, 'native_workspace_sync_out_retry_exhausted', 'fp-recon', 'board', now());`.replace(
        /\$(\d)/g,
        (_, n: string) => `'${[environment, company, lease, issue, run, action][Number(n) - 1]}'`,
      ),
    );
    const listen = await collector();
    try {
      await sql.query(
        `INSERT INTO reconstruction_intents (id, company_id, issue_id, source_run_id, recovery_action_id, lease_id, attachment_hashes, description, external_action_outcomes, source_status_version, request_id, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, '[]', 'Secret description', '{}', 1, 'req-1', now())`,
        [intent, company, issue, run, action, lease],
      );
      expect(await listen.next((e) => e.id === intent && e.op === "INSERT")).toEqual({
        companyId: company,
        entity: "reconstruction_intents",
        id: intent,
        issueId: issue,
        runId: run,
        op: "INSERT",
      });
      // A refused delivery cancels it; a fresh decision replaces it in place (pending again).
      await sql.query("UPDATE reconstruction_intents SET status = 'cancelled' WHERE id = $1", [intent]);
      await sql.query("UPDATE reconstruction_intents SET status = 'pending', request_id = 'req-2' WHERE id = $1", [intent]);
      await waitFor(() => listen.events.filter((e) => e.id === intent && e.op === "UPDATE").length === 2);
      for (const event of listen.events.filter((e) => e.id === intent)) expect(event).toMatchObject({ companyId: company, issueId: issue });
      // Ids only: no description or request id travels.
      for (const payload of listen.raw) expect(payload).not.toMatch(/Secret description|req-/);
    } finally {
      await listen.close();
    }
  });

  it("R-RC-3 R-UI-3: a task's attachment added, changed and removed is announced for its company and task, no run (ids only)", async () => {
    const otherIssue = randomUUID();
    await sql.query(
      `INSERT INTO issues (id, company_id, number, identifier, title, updated_at) VALUES ($1, $2, 1, 'GLX-1', 'Globex task', now())`,
      [otherIssue, otherCompany],
    );
    const listen = await collector();
    try {
      const attachment = randomUUID();
      const otherAttachment = randomUUID();
      const insert = `INSERT INTO issue_attachments (id, company_id, issue_id, file_name, content_type, size_bytes, sha256, storage_path)
                      VALUES ($1, $2, $3, 'secret-design.md', 'text/markdown', 12, $4, $5)`;
      await sql.query(insert, [attachment, company, issue, "a".repeat(64), `attachments/${company}/${attachment}`]);
      expect(await listen.next((e) => e.id === attachment && e.op === "INSERT")).toEqual({
        companyId: company,
        entity: "issue_attachments",
        id: attachment,
        issueId: issue,
        runId: null,
        op: "INSERT",
      });
      // Another company's attachment names that company and its own task, never this one's.
      await sql.query(insert, [otherAttachment, otherCompany, otherIssue, "b".repeat(64), `attachments/${otherCompany}/${otherAttachment}`]);
      expect(await listen.next((e) => e.id === otherAttachment)).toMatchObject({ companyId: otherCompany, issueId: otherIssue });
      await sql.query("UPDATE issue_attachments SET content_type = 'text/plain' WHERE id = $1", [attachment]);
      await sql.query("DELETE FROM issue_attachments WHERE id = $1", [attachment]);
      await listen.next((e) => e.id === attachment && e.op === "DELETE");
      const mine = listen.events.filter((e) => e.id === attachment);
      expect(mine.map((e) => e.op)).toEqual(["INSERT", "UPDATE", "DELETE"]);
      for (const event of mine) expect(event).toMatchObject({ companyId: company, entity: "issue_attachments", issueId: issue, runId: null });
      // Ids only: no file name, hash or storage path travels.
      for (const payload of listen.raw) expect(payload).not.toMatch(/secret-design|aaaa|attachments\//);
    } finally {
      await listen.close();
    }
  });

  it("stays silent for a rolled-back change and for an UPDATE that changes nothing", async () => {
    const listen = await collector();
    try {
      await sql.query("BEGIN");
      await sql.query("UPDATE issues SET title = 'Rolled back' WHERE id = $1", [issue]);
      await sql.query("ROLLBACK");
      await sql.query("UPDATE issues SET title = title WHERE id = $1", [issue]);
      // A marker change afterwards: once it arrives, anything sent before it has arrived too.
      await sql.query("UPDATE heartbeat_runs SET wake_reason = 'marker' WHERE id = $1", [run]);
      await listen.next((e) => e.entity === "heartbeat_runs");
      expect(listen.events.filter((e) => e.entity === "issues")).toEqual([]);
    } finally {
      await listen.close();
    }
  });
});

describe("startNotificationListener", () => {
  let listener: NotificationListener | undefined;
  afterAll(async () => {
    await listener?.stop();
  });

  it("re-LISTENs after its connection is terminated and reports the gap", async () => {
    const payloads: string[] = [];
    const listens: Array<{ resumed: boolean; backendPid: number }> = [];
    listener = startNotificationListener({
      databaseUrl: db.url(),
      channels: [LIVE_EVENTS_CHANNEL],
      onNotification: (_channel, payload) => payloads.push(payload),
      onListening: (info) => listens.push(info),
      backoff: { initialMs: 20, maxMs: 200 },
    });
    await listener.ready();
    const firstPid = listener.backendPid();
    expect(firstPid).toBeGreaterThan(0);
    const appName = await sql.query<{ application_name: string }>(
      "SELECT application_name FROM pg_stat_activity WHERE pid = $1",
      [firstPid],
    );
    expect(appName.rows[0]?.application_name).toBe("copyback-listen");

    await sql.query("UPDATE issues SET title = 'Before the drop' WHERE id = $1", [issue]);
    await waitFor(() => payloads.length >= 1);

    await sql.query("SELECT pg_terminate_backend($1)", [firstPid]);
    await waitFor(() => listens.length === 2, 5_000);
    expect(listens[1]).toMatchObject({ resumed: true });
    expect(listener.state).toBe("listening");
    expect(listener.backendPid()).not.toBe(firstPid);

    await sql.query("UPDATE issues SET title = 'After the drop' WHERE id = $1", [issue]);
    await waitFor(() => payloads.length >= 2);
    expect(parseLiveEvent(payloads.at(-1))).toMatchObject({ entity: "issues", id: issue });
  });

  it("keeps retrying while the database refuses connections, then listens", async () => {
    let refusals = 2;
    const states: string[] = [];
    const retrying = startNotificationListener({
      databaseUrl: db.url(),
      channels: [LIVE_EVENTS_CHANNEL],
      onNotification: () => undefined,
      onStateChange: (state) => states.push(state),
      backoff: { initialMs: 10, maxMs: 50 },
      connect: async (url, applicationName) => {
        if (refusals-- > 0) throw new Error("connection refused");
        const client = new pg.Client({ connectionString: url, application_name: applicationName });
        client.on("error", () => undefined);
        await client.connect();
        return client;
      },
    });
    try {
      await retrying.ready();
      expect(states).toEqual(["reconnecting", "reconnecting", "listening"]);
    } finally {
      await retrying.stop();
    }
    expect(retrying.state).toBe("stopped");
    await expect(retrying.ready()).resolves.toBeUndefined();
  });

  it("stop() before the first connection rejects ready() and closes nothing twice", async () => {
    const never = startNotificationListener({
      databaseUrl: "postgresql://postgres@127.0.0.1:1/none",
      channels: [LIVE_EVENTS_CHANNEL],
      onNotification: () => undefined,
      backoff: { initialMs: 10, maxMs: 20 },
      connect: () => Promise.reject(new Error("connection refused")),
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await never.stop();
    await never.stop();
    await expect(never.ready()).rejects.toThrow(/stopped before/);
  });

  it("refuses to start without a channel", () => {
    expect(() =>
      startNotificationListener({
        databaseUrl: db.url(),
        channels: [],
        onNotification: () => undefined,
      }),
    ).toThrow(RangeError);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
