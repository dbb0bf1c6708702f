// The embedded server's log goes to files under the instance root, never to a pipe its parent must
// drain: a parent that blocks its event loop (a test runner in spawnSync, a long synchronous step)
// once left the server blocked writing a log line, so the checkpointer stalled and every
// `DROP DATABASE ... WITH (FORCE)` waited for a checkpoint.
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, holdServerInChild, tempInstanceRoot, type HeldServer } from "./embedded-fixtures/support";

const BLOCK_MS = 60_000;
const STEP_MS = 15_000;
const roots: string[] = [];
const held: HeldServer[] = [];

afterAll(async () => {
  for (const h of held.splice(0)) await h.release();
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

/** Runs `sql` on a fresh connection; fails (and drops the connection) if it takes longer than STEP_MS. */
async function within(url: string, what: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: STEP_MS });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${STEP_MS / 1000} s`)), STEP_MS);
  });
  try {
    await Promise.race([(async () => {
      await client.connect();
      await client.query(sql);
    })(), deadline]);
  } finally {
    clearTimeout(timer);
    // A stuck backend never answers the terminate message: do not wait for it.
    (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    void client.end().catch(() => undefined);
  }
}

function logText(root: string): string {
  const dir = path.join(root, "postgres", "data", "log");
  if (!fs.existsSync(dir)) return "";
  return fs.readdirSync(dir).map((name) => fs.readFileSync(path.join(dir, name), "utf8")).join("");
}

describe("the embedded server's log", () => {
  it(
    "keeps accepting connections and checkpoints while its parent blocks for a minute (the log goes to a file under the instance root)",
    async () => {
      const root = tempInstanceRoot();
      roots.push(root);
      const server = await holdServerInChild(root, await freePort());
      held.push(server);
      const started = Date.now();
      await server.block(BLOCK_MS);
      // About 1 MiB of log lines: far more than a pipe holds (64 KiB on Linux).
      await within(
        server.url,
        "1 MiB of log lines",
        "DO $$ BEGIN FOR i IN 1..4000 LOOP RAISE LOG 'copyback-log-test % %', i, repeat('x', 240); END LOOP; END $$",
      );
      await within(server.url, "CHECKPOINT", "CHECKPOINT");
      await within(server.url, "CREATE DATABASE", "CREATE DATABASE log_test_scratch");
      await within(server.url, "DROP DATABASE WITH (FORCE)", "DROP DATABASE log_test_scratch WITH (FORCE)");
      await within(server.url, "a new connection", "SELECT 1");
      // All of it happened while the parent was still blocked.
      expect(Date.now() - started).toBeLessThan(BLOCK_MS);
      const text = logText(root);
      expect(text).toContain("copyback-log-test 4000");
      expect(text).toMatch(/checkpoint (starting|complete)/);
    },
    BLOCK_MS + 60_000,
  );
});
