// A real embedded server killed with SIGKILL under a supervisor is started again
// (stale postmaster.pid and draining backends handled as at start), keeps its committed rows and
// its URL, and a pool that was connected before the death carries on; a stop ends supervision.
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { superviseEmbeddedPostgres } from "../src/embedded/supervise";
import { freePort, isAlive, query, tempInstanceRoot, waitUntil } from "./embedded-fixtures/support";

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

describe("the supervised embedded PostgreSQL", () => {
  it("restarts a postmaster killed with SIGKILL, in one line, keeping rows, URL and clients", async () => {
    const root = tempInstanceRoot();
    roots.push(root);
    const events: string[] = [];
    const log: string[] = [];
    const db = await superviseEmbeddedPostgres({
      instanceRoot: root,
      port: await freePort(),
      onEvent: (line) => events.push(line),
      log: (line) => log.push(line),
      backoff: { initialMs: 50 },
    });
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    pool.on("error", () => undefined); // idle clients die with the server: the pool drops them
    try {
      await pool.query("CREATE TABLE kept AS SELECT 1 AS n");
      const first = db.pid();
      const pidFile = path.join(db.dataDir, "postmaster.pid");
      process.kill(first, "SIGKILL");
      await waitUntil(() => !isAlive(first));
      expect(fs.existsSync(pidFile)).toBe(true); // kill -9 leaves the lock file behind

      await waitUntil(() => db.restarts() === 1, 60_000);
      await db.running();
      expect(db.pid()).not.toBe(first);
      expect(isAlive(db.pid())).toBe(true);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatch(new RegExp(`^embedded PostgreSQL \\(PID ${first}\\) died \\(killed by SIGKILL\\); restarted it after [0-9.]+ s as PID ${db.pid()} \\(restart 1\\)$`));
      expect(log.some((line) => line.includes("stale postmaster.pid") || line.includes("leftover server process"))).toBe(true);

      // The same URL answers; the pool that was connected before reconnects on its own.
      expect(await query(db.url, "SELECT n FROM kept")).toEqual([{ n: 1 }]);
      let answered: unknown;
      for (let i = 0; i < 3 && answered === undefined; i++) {
        answered = await pool.query("SELECT n FROM kept").then((r) => r.rows, () => undefined);
      }
      expect(answered).toEqual([{ n: 1 }]);

      // A second death is restarted as well.
      const second = db.pid();
      process.kill(second, "SIGKILL");
      await waitUntil(() => db.restarts() === 2, 60_000);
      await db.running();
      expect(await query(db.url, "SELECT n FROM kept")).toEqual([{ n: 1 }]);
    } finally {
      await pool.end();
      await db.stop();
    }
    // Stopped on purpose: not restarted.
    const last = db.pid();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(isAlive(last)).toBe(false);
    expect(db.restarts()).toBe(2);
    expect(fs.existsSync(path.join(db.dataDir, "postmaster.pid"))).toBe(false);
  });
});
