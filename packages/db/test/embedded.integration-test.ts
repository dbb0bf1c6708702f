// The embedded PostgreSQL on real instance roots under the OS temp directory: first start,
// restart, crash recovery, refusals. Every refusal must leave the data as it was.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../src/embedded/start";
import { EmbeddedPostgresError } from "../src/embedded/errors";
import {
  freePort,
  holdServerInChild,
  isAlive,
  query,
  tempInstanceRoot,
  waitUntil,
  type HeldServer,
} from "./embedded-fixtures/support";

const roots: string[] = [];
const running: EmbeddedDatabase[] = [];
const held: HeldServer[] = [];

function newRoot(): string {
  const root = tempInstanceRoot();
  roots.push(root);
  return root;
}

async function start(instanceRoot: string, port: number): Promise<EmbeddedDatabase> {
  const server = await startEmbeddedPostgres({ instanceRoot, port });
  running.push(server);
  return server;
}

async function expectRefusal(
  promise: Promise<unknown>,
  code: string,
): Promise<EmbeddedPostgresError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EmbeddedPostgresError);
  expect((error as EmbeddedPostgresError).code).toBe(code);
  return error as EmbeddedPostgresError;
}

function snapshot(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).map(String).sort() : [];
}

afterEach(async () => {
  for (const h of held.splice(0)) await h.release();
  for (const server of running.splice(0)) await server.stop();
});

afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

describe("embedded PostgreSQL lifecycle", () => {
  it("initialises on first start, keeps data across stop and restart, and stops idempotently", async () => {
    const root = newRoot();
    const port = await freePort();
    const first = await start(root, port);
    expect(first.dataDir).toBe(path.join(root, "postgres", "data"));
    expect(first.port).toBe(port);
    const url = new URL(first.url);
    expect(url.hostname).toBe("127.0.0.1");
    expect(url.pathname).toBe("/copyback");

    const [version] = await query<{ server_version: string }>(first.url, "SHOW server_version");
    expect(version?.server_version).toMatch(/^18\./);
    await query(first.url, "CREATE TABLE kept (id int primary key, note text)");
    await query(first.url, "INSERT INTO kept VALUES (1, 'before restart')");

    // The password lives in an owner-only file; the server refuses a wrong one.
    const credentialsFile = path.join(root, "postgres", "credentials.json");
    expect(fs.statSync(credentialsFile).mode & 0o777).toBe(0o600);
    const credentials = JSON.parse(fs.readFileSync(credentialsFile, "utf8")) as {
      user: string;
      password: string;
    };
    expect(decodeURIComponent(url.password)).toBe(credentials.password);
    const wrong = new URL(first.url);
    wrong.password = "not-the-password";
    await expect(query(wrong.toString(), "SELECT 1")).rejects.toThrow(
      /password authentication failed/,
    );

    await first.stop();
    await first.stop(); // idempotent
    expect(isAlive(first.pid)).toBe(false);
    expect(fs.existsSync(path.join(first.dataDir, "postmaster.pid"))).toBe(false);

    const second = await start(root, port);
    expect(second.pid).not.toBe(first.pid);
    expect(second.url).toBe(first.url); // same credentials reused, no re-initialisation
    expect(await query(second.url, "SELECT note FROM kept")).toEqual([{ note: "before restart" }]);
  });

  it("starts after a stale postmaster.pid whose PID is dead, with the data intact", async () => {
    const root = newRoot();
    const port = await freePort();
    const server = await start(root, port);
    await query(server.url, "CREATE TABLE kept AS SELECT 42 AS answer");
    await server.stop();

    // What a crash leaves: a lock file naming a process that no longer exists.
    const dead = Number(execFileSync("sh", ["-c", "sh -c 'echo $$'"]).toString().trim());
    expect(isAlive(dead)).toBe(false);
    const pidFile = path.join(server.dataDir, "postmaster.pid");
    fs.writeFileSync(
      pidFile,
      `${dead}\n${server.dataDir}\n1764466167\n${port}\n\n127.0.0.1\n  1234567    98304\nready   \n`,
    );

    const restarted = await start(root, port);
    expect(await query(restarted.url, "SELECT answer FROM kept")).toEqual([{ answer: 42 }]);
    expect(fs.readFileSync(pidFile, "utf8").split("\n")[0]).toBe(String(restarted.pid));
  });

  it("starts after a stale postmaster.pid whose PID now belongs to an unrelated process", async () => {
    const root = newRoot();
    const port = await freePort();
    const server = await start(root, port);
    await query(server.url, "CREATE TABLE kept AS SELECT 'reused' AS pid_case");
    await server.stop();
    // PostgreSQL alone would refuse here ("Is another postmaster (PID n) running?").
    const pidFile = path.join(server.dataDir, "postmaster.pid");
    fs.writeFileSync(
      pidFile,
      `${process.pid}\n${server.dataDir}\n1764466167\n${port}\n\n127.0.0.1\n  1234567    98304\nready   \n`,
    );

    const restarted = await start(root, port);
    expect(await query(restarted.url, "SELECT pid_case FROM kept")).toEqual([
      { pid_case: "reused" },
    ]);
  });

  it("recovers after the postmaster is killed with SIGKILL, keeping committed rows", async () => {
    const root = newRoot();
    const port = await freePort();
    const server = await start(root, port);
    await query(server.url, "CREATE TABLE kept (id int)");
    await query(server.url, "INSERT INTO kept SELECT generate_series(1, 1000)");

    process.kill(server.pid, "SIGKILL");
    await waitUntil(() => !isAlive(server.pid));
    expect(fs.existsSync(path.join(server.dataDir, "postmaster.pid"))).toBe(true);

    const restarted = await start(root, port);
    expect(await query(restarted.url, "SELECT count(*)::int AS n FROM kept")).toEqual([
      { n: 1000 },
    ]);
    await server.stop(); // the killed instance's stop() still resolves
  });
});

describe("embedded PostgreSQL refusals", () => {
  it("refuses a second start on a running instance root, naming the other PID, and leaves the first server alone", async () => {
    const root = newRoot();
    const port = await freePort();
    const other = await holdServerInChild(root, port);
    held.push(other);
    await query(other.url, "CREATE TABLE kept AS SELECT 1 AS still_here");

    // From another process (through the data directory) and on another port as well.
    const error = await expectRefusal(
      startEmbeddedPostgres({ instanceRoot: root, port: await freePort() }),
      "ALREADY_RUNNING",
    );
    expect(error.message).toContain(`PID ${other.pid}`);
    expect(error.message).toContain(`port ${port}`);

    expect(isAlive(other.pid)).toBe(true);
    expect(await query(other.url, "SELECT still_here FROM kept")).toEqual([{ still_here: 1 }]);
  });

  it("refuses a second start from the same process", async () => {
    const root = newRoot();
    const port = await freePort();
    const server = await start(root, port);
    const error = await expectRefusal(
      startEmbeddedPostgres({ instanceRoot: root, port: await freePort() }),
      "ALREADY_RUNNING",
    );
    expect(error.message).toContain(`PID ${process.pid}`);
    expect(await query(server.url, "SELECT 1 AS ok")).toEqual([{ ok: 1 }]);
  });

  it("refuses to start beside a server whose owning process died (orphaned postmaster)", async () => {
    const root = newRoot();
    const port = await freePort();
    const other = await holdServerInChild(root, port);
    other.child.kill("SIGKILL");
    await waitUntil(() => !isAlive(other.ownerPid));
    try {
      expect(isAlive(other.pid)).toBe(true); // detached: the postmaster outlives its owner
      const error = await expectRefusal(
        startEmbeddedPostgres({ instanceRoot: root, port: await freePort() }),
        "ALREADY_RUNNING",
      );
      expect(error.message).toContain(`kill -INT ${other.pid}`);
    } finally {
      process.kill(other.pid, "SIGINT");
      await waitUntil(() => !isAlive(other.pid));
    }
    // Once it is gone, the instance root starts normally.
    await start(root, port);
  });

  it("refuses a port another program listens on, naming the port and COPYBACK_DB_PORT, and creates nothing", async () => {
    const root = newRoot();
    const blocker = net.createServer();
    const port = await new Promise<number>((resolve) =>
      blocker.listen(0, "127.0.0.1", () => resolve((blocker.address() as net.AddressInfo).port)),
    );
    try {
      const error = await expectRefusal(
        startEmbeddedPostgres({ instanceRoot: root, port }),
        "PORT_IN_USE",
      );
      expect(error.message).toContain(`Port ${port}`);
      expect(error.message).toContain("COPYBACK_DB_PORT");
      expect(snapshot(root)).toEqual([]);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it("refuses port 5432, which belongs to the system PostgreSQL", async () => {
    const root = newRoot();
    await expectRefusal(startEmbeddedPostgres({ instanceRoot: root, port: 5432 }), "INVALID_PORT");
    expect(snapshot(root)).toEqual([]);
  });

  it("refuses a data directory of another PostgreSQL major version and touches none of its files", async () => {
    const root = newRoot();
    const dataDir = path.join(root, "postgres", "data");
    fs.mkdirSync(path.join(dataDir, "base"), { recursive: true });
    fs.writeFileSync(path.join(dataDir, "PG_VERSION"), "16\n");
    fs.writeFileSync(path.join(dataDir, "base", "precious"), "user data");
    const before = snapshot(root);
    const error = await expectRefusal(
      startEmbeddedPostgres({ instanceRoot: root, port: await freePort() }),
      "INCOMPATIBLE_DATA_DIR",
    );
    expect(error.message).toMatch(/PostgreSQL 16.*PostgreSQL 18/s);
    expect(snapshot(root)).toEqual(before);
    expect(fs.readFileSync(path.join(dataDir, "base", "precious"), "utf8")).toBe("user data");
  });

  it("refuses a non-empty data directory that is not a cluster", async () => {
    const root = newRoot();
    const dataDir = path.join(root, "postgres", "data");
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(path.join(dataDir, "notes.txt"), "mine");
    await expectRefusal(
      startEmbeddedPostgres({ instanceRoot: root, port: await freePort() }),
      "INVALID_DATA_DIR",
    );
    expect(fs.readdirSync(dataDir)).toEqual(["notes.txt"]);
  });

  it.runIf(process.getuid?.() === 0)(
    "as root, keeps a cluster the postgres account cannot reach inside the instance root in /var/lib/copyback, behind a symlink",
    async () => {
      // The default instance root of root, ~/.copyback, sits in /root (0700): same situation.
      const outer = newRoot(); // 0700, root-owned: the server's account cannot enter it
      const root = path.join(outer, "home");
      const port = await freePort();
      const server = await start(root, port);
      const target = fs.readlinkSync(server.dataDir);
      try {
        expect(target).toMatch(/^\/var\/lib\/copyback\/cluster-[0-9a-f]{16}\/data$/);
        expect(fs.statSync(outer).mode & 0o777).toBe(0o700); // nothing of root's was widened
        await query(server.url, "CREATE TABLE kept AS SELECT 'relocated' AS how");
        await server.stop();
        const again = await start(root, port);
        expect(await query(again.url, "SELECT how FROM kept")).toEqual([{ how: "relocated" }]);
        await again.stop();
      } finally {
        fs.rmSync(path.dirname(target), { recursive: true, force: true });
      }
    },
  );

  it("refuses a cluster whose credentials.json is gone, without touching the data", async () => {
    const root = newRoot();
    const port = await freePort();
    const server = await start(root, port);
    await server.stop();
    fs.rmSync(path.join(root, "postgres", "credentials.json"));
    const before = snapshot(server.dataDir);
    const error = await expectRefusal(
      startEmbeddedPostgres({ instanceRoot: root, port }),
      "CREDENTIALS_MISSING",
    );
    expect(error.message).toContain("credentials.json");
    expect(snapshot(server.dataDir)).toEqual(before);
  });
});
