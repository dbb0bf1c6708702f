// The torture's PostgreSQL: a fresh database on the machine's server (COPYBACK_TEST_DATABASE_URL,
// else postgresql://postgres@127.0.0.1:5432 when it answers), or an embedded server the harness
// owns (the only case in which the nemesis may restart PostgreSQL). The database gets a short
// idle_in_transaction_session_timeout, so a paused worker's transactions are cut off.
import net from "node:net";
import pg from "pg";
import { applyMigrations, startEmbeddedPostgres } from "@copyback/db";
import { harnessEnv } from "./env";

export interface TortureDatabase {
  url: string;
  name: string;
  owned: boolean;
  server: string;
  restart(): Promise<void>;
  drop(): Promise<void>;
  /** Stops an owned server and keeps its data (a kept run's database stays readable); nothing otherwise. */
  stop(): Promise<void>;
  admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const withDb = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function openTortureDatabase(opts: {
  embedded: boolean;
  pgRoot: string;
  idleTimeoutMs: number;
  /** An embedded server's further listen addresses and admitted subnets (the hosts' network namespaces: two-host/netns.ts). */
  extraListen?: readonly { address: string; subnet: string }[];
}): Promise<TortureDatabase> {
  const name = `copyback_torture_${Date.now().toString(36)}_${process.pid}`;
  let adminUrl: string;
  let owned = false;
  let restart = async (): Promise<void> => {
    throw new Error("the harness does not own this PostgreSQL server");
  };
  let stop = async (): Promise<void> => undefined;
  const service = harnessEnv.testDatabaseUrl ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  if (!opts.embedded && (await answers(service))) {
    adminUrl = service;
  } else {
    const port = await freePort();
    const start = { instanceRoot: opts.pgRoot, port, ...(opts.extraListen ? { extraListen: opts.extraListen } : {}) };
    let server = await startEmbeddedPostgres(start);
    adminUrl = server.url;
    owned = true;
    restart = async () => {
      await server.stop();
      server = await startEmbeddedPostgres(start);
    };
    stop = async () => server.stop();
  }
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`));
  const url = withDb(adminUrl, name);
  await applyMigrations(url);
  await withClient(adminUrl, (c) => c.query(`ALTER DATABASE ${c.escapeIdentifier(name)} SET idle_in_transaction_session_timeout = ${Number(opts.idleTimeoutMs)}`));
  return {
    url,
    name,
    owned,
    server: new URL(adminUrl).host,
    restart,
    admin: (fn) => withClient(adminUrl, fn),
    drop: async () => {
      await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`)).catch(() => undefined);
      await stop();
    },
    stop: () => stop(),
  };
}
