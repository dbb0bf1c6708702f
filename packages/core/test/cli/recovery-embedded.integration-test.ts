// The recovery commands on the default install: no DATABASE_URL, the embedded PostgreSQL of the
// instance root started the way the launcher starts it (resolveDatabase, migrations applied).
// The CLI finds the running server (postmaster.pid's port, the owner-only password file) and
// never starts one itself: once the server is stopped it says so.
import { lstat, realpath, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveDatabase, type ResolvedDatabase } from "@copyback/db";
import { EXIT } from "../../src/cli/exit-codes";
import { freePort, parseJson, removeTempDirs, runCli, tempDir } from "./helpers";

let server: ResolvedDatabase | undefined;
let clusterOutside: string | undefined;

afterAll(async () => {
  await server?.stop();
  // As root the cluster lives outside the instance root (README "Embedded PostgreSQL as root").
  if (clusterOutside) await rm(clusterOutside, { recursive: true, force: true });
  await removeTempDirs();
});

describe("copyback recovery on the embedded database", { timeout: 180_000 }, () => {
  it("lists from the running embedded cluster of --home, and says it is not running once stopped", async () => {
    const home = await tempDir("recovery-embedded");
    server = await resolveDatabase({ instanceRoot: home, port: await freePort(), migrate: true });
    const dataDir = path.join(home, "postgres", "data");
    if ((await lstat(dataDir)).isSymbolicLink())
      clusterOutside = path.dirname(await realpath(dataDir));
    const port = new URL(server.url).port;

    // COPYBACK_DB_PORT unset (its default 54329 is not this server's): postmaster.pid names the port.
    const listed = await runCli(["--json", "--home", home, "recovery", "list"]);
    expect(listed.code, listed.stdout + listed.stderr).toBe(EXIT.ok);
    expect(parseJson(listed)).toMatchObject({
      ok: true,
      total: 0,
      actions: [],
      database: `the embedded database of ${home} (127.0.0.1:${port})`,
    });

    await server.stop();
    server = undefined;
    const stopped = await runCli(["--json", "--home", home, "recovery", "list"], {
      embeddedPort: port,
    });
    expect(stopped.code).toBe(EXIT.environment);
    expect(parseJson(stopped)).toMatchObject({
      error: {
        code: "embedded_database_not_running",
        message: expect.stringContaining("npm start"),
      },
    });
  });
});
