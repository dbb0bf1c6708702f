// Which database the `recovery` commands use and what they say when there is none: DATABASE_URL,
// else the RUNNING embedded cluster of the instance root (never started by the CLI). No server
// is needed: every case here fails before a query, on a loopback port nothing listens on.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { describeFailure } from "../../src/cli/errors";
import { EXIT } from "../../src/cli/exit-codes";
import { conflict, invalid, notFound } from "../../src/errors";
import { freePort, parseJson, removeTempDirs, runCli, tempDir, type CliRun } from "./helpers";

afterEach(removeTempDirs);

/** A loopback port nothing listens on (free a moment ago). */
const closedPort = freePort;

/** An instance root whose embedded cluster was initialised once (its password file exists). */
async function instanceWithCredentials(): Promise<string> {
  const home = await tempDir("recovery-db");
  await mkdir(path.join(home, "postgres", "data"), { recursive: true, mode: 0o700 });
  await writeFile(
    path.join(home, "postgres", "credentials.json"),
    JSON.stringify({ user: "postgres", password: "pw-secret-1" }),
    { mode: 0o600 },
  );
  return home;
}

const error = (run: CliRun) => parseJson(run).error as { code: string; message: string };

describe("the recovery commands' database", () => {
  it("an instance root without an embedded database: exit 3, embedded_database_missing, naming DATABASE_URL", async () => {
    const home = await tempDir("recovery-db");
    const run = await runCli(["--json", "--home", home, "recovery", "list"]);
    expect(run.code).toBe(EXIT.environment);
    expect(error(run).code).toBe("embedded_database_missing");
    expect(error(run).message).toContain("DATABASE_URL");
  });

  it("an embedded cluster that is not running: exit 3, embedded_database_not_running, saying to start Copyback (the CLI never starts it)", async () => {
    const home = await instanceWithCredentials();
    const port = await closedPort();
    for (const argv of [
      ["recovery", "list"],
      ["recovery", "show", "00000000-0000-4000-8000-000000000000"],
    ]) {
      const run = await runCli(["--json", "--home", home, ...argv], { embeddedPort: String(port) });
      expect(run.code).toBe(EXIT.environment);
      expect(error(run).code).toBe("embedded_database_not_running");
      expect(error(run).message).toContain(`127.0.0.1:${port}`);
      expect(error(run).message).toContain("npm start");
      expect(error(run).message).not.toContain("pw-secret-1");
    }
  });

  it("the port of the server recorded in postmaster.pid wins over COPYBACK_DB_PORT", async () => {
    const home = await instanceWithCredentials();
    const recorded = await closedPort();
    await writeFile(
      path.join(home, "postgres", "data", "postmaster.pid"),
      `999999\n${home}/postgres/data\n1700000000\n${recorded}\n/tmp\n127.0.0.1\n`,
    );
    const run = await runCli(["--json", "--home", home, "recovery", "list"], {
      embeddedPort: "54321",
    });
    expect(error(run).code).toBe("embedded_database_not_running");
    expect(error(run).message).toContain(`127.0.0.1:${recorded}`);
  });

  it("an invalid COPYBACK_DB_PORT is a usage error (2) naming it", async () => {
    const home = await instanceWithCredentials();
    const run = await runCli(["--json", "--home", home, "recovery", "list"], {
      embeddedPort: "5432",
    });
    expect(run.code).toBe(EXIT.usage);
    expect(error(run)).toMatchObject({
      code: "invalid_port",
      message: expect.stringContaining("COPYBACK_DB_PORT"),
    });
  });

  it("DATABASE_URL that nothing answers: exit 3, database_unreachable, without the password; a malformed one: database_url_invalid", async () => {
    const port = await closedPort();
    const run = await runCli(["--json", "recovery", "list"], {
      databaseUrl: `postgresql://ops:pw-secret-2@127.0.0.1:${port}/copyback`,
    });
    expect(run.code).toBe(EXIT.environment);
    expect(error(run).code).toBe("database_unreachable");
    expect(error(run).message).not.toContain("pw-secret-2");
    const bad = await runCli(["--json", "recovery", "list"], { databaseUrl: "mysql://x" });
    expect(bad.code).toBe(EXIT.environment);
    expect(error(bad).code).toBe("database_url_invalid");
  });

  it("R-ATT-1: malformed attestation input is refused before any database is opened (exit 2, not 3)", async () => {
    const home = await tempDir("recovery-db");
    const run = await runCli([
      "--json",
      "--home",
      home,
      "recovery",
      "attest",
      "--action",
      "x",
      "--run",
      "y",
      "--token",
      "t",
      "--evidence",
      "e",
      "--controller-and-copyback-stopped",
    ]);
    expect(run.code).toBe(EXIT.usage);
    expect(error(run).code).toBe("invalid_request");
  });
});

describe("recovery refusals in the exit-status policy", () => {
  it("a service's conflict or not_found is the command's answer (1), its stable code first; invalid is usage (2)", () => {
    const refused = describeFailure(
      conflict("owner_changed", "The run carries a newer owner receipt."),
    );
    expect(refused).toMatchObject({ exitCode: EXIT.failed, code: "owner_changed", expected: true });
    expect(refused.message).toBe("owner_changed: The run carries a newer owner receipt.");
    expect(describeFailure(notFound("The recovery action"))).toMatchObject({
      exitCode: EXIT.failed,
      code: "not_found",
    });
    expect(describeFailure(invalid("bad", "Bad."))).toMatchObject({
      exitCode: EXIT.usage,
      code: "bad",
    });
  });

  it("--help lists the recovery commands and the database they use", async () => {
    const run = await runCli(["--help"]);
    expect(run.stdout).toContain("recovery");
    expect(run.stdout).toContain("DATABASE_URL");
    const attest = await runCli(["recovery", "attest", "--help"]);
    expect(attest.code).toBe(EXIT.ok);
    expect(attest.stdout).toContain("--controller-and-copyback-stopped");
  });
});
