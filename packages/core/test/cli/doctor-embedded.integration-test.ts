// `copyback doctor` and the embedded PostgreSQL agree about the instance root: as root, the
// launcher opens a private root for the server's account with exactly the traverse bit; doctor
// must not then tell the user to chmod 700 it (which would cut the server off from its data).
import { stat } from "node:fs/promises";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "@copyback/db";
import { freePort, removeTempDirs, runCli, tempDir } from "./helpers";

const servers: EmbeddedDatabase[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
  await removeTempDirs();
});

describe("copyback doctor on an embedded PostgreSQL's instance root", () => {
  it("reports the root the launcher prepared as fit, and the server keeps its data directory", async () => {
    const home = await tempDir("doctor-embedded"); // mkdtemp: 0700
    const server = await startEmbeddedPostgres({ instanceRoot: home, port: await freePort() });
    servers.push(server);
    const mode = (await stat(home)).mode & 0o777;
    // As root the server runs as `postgres` and the root became 0701; as anyone else it stays 0700.
    expect(mode).toBe(process.getuid?.() === 0 ? 0o701 : 0o700);
    const run = await runCli(["doctor", "--home", home]);
    expect(run.stdout).toMatch(/^ok\s+instance_root\s+/m);
    expect(run.stdout).not.toMatch(/chmod 700 /);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.query("CHECKPOINT");
    await client.end();
  });
});
