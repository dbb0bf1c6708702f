import { describe, expect, it } from "vitest";
import { parseServerMajor } from "./binaries";
import { parseCredentials } from "./credentials";
import { checkMajor } from "./data-dir";
import { EmbeddedPostgresError } from "./errors";
import { DEFAULT_EMBEDDED_PORT, connectionUrl, instanceLayout, validatePort } from "./layout";
import { parsePidFile } from "./live-server";
import { parseParentPid, postmastersOf } from "./processes";
import { classifyStartFailure } from "./start-failure";

describe("instance layout and port", () => {
  it("keeps the cluster and its password under <instanceRoot>/postgres", () => {
    const layout = instanceLayout("/srv/copyback/");
    expect(layout).toEqual({
      instanceRoot: "/srv/copyback",
      postgresDir: "/srv/copyback/postgres",
      dataDir: "/srv/copyback/postgres/data",
      credentialsFile: "/srv/copyback/postgres/credentials.json",
    });
  });

  it("accepts the default port and refuses 5432, privileged and out-of-range ports", () => {
    expect(validatePort(DEFAULT_EMBEDDED_PORT)).toBe(54329);
    for (const bad of [5432, 80, 0, 70_000, 54329.5, Number.NaN]) {
      expect(() => validatePort(bad)).toThrow(EmbeddedPostgresError);
      try {
        validatePort(bad);
      } catch (error) {
        expect((error as EmbeddedPostgresError).code).toBe("INVALID_PORT");
        expect((error as Error).message).toContain("COPYBACK_DB_PORT");
      }
    }
  });

  it("builds a loopback URL with the password encoded", () => {
    const url = connectionUrl({
      user: "postgres",
      password: "a/b@c:d",
      port: 54329,
      database: "copyback",
    });
    expect(url).toBe("postgresql://postgres:a%2Fb%40c%3Ad@127.0.0.1:54329/copyback");
    expect(decodeURIComponent(new URL(url).password)).toBe("a/b@c:d");
  });
});

describe("files the server leaves behind", () => {
  it("reads the PID, port and status of postmaster.pid", () => {
    const text =
      "4242\n/tmp/x/postgres/data\n1764466167\n54329\n\n127.0.0.1\n  1234567    98304\nready   \n";
    expect(parsePidFile(text)).toEqual({ pid: 4242, port: 54329, status: "ready" });
    expect(parsePidFile(text.replace("ready   ", "starting"))).toMatchObject({ status: "starting" });
    // Written before the sockets and shared memory: no status line yet.
    expect(parsePidFile("4242\n/tmp/x/postgres/data\n1764466167\n54329\n")).toEqual({ pid: 4242, port: 54329 });
    expect(parsePidFile("4242\n")).toEqual({ pid: 4242 });
    expect(parsePidFile("")).toBeUndefined();
    expect(parsePidFile("garbage\n")).toBeUndefined();
    expect(parsePidFile("-3\n")).toBeUndefined();
  });

  it("parses the parent PID even when the command name holds spaces and parentheses", () => {
    expect(parseParentPid("123 (postgres) S 1 123 123 0 -1")).toBe(1);
    expect(parseParentPid("124 (a (weird) name) S 77 124 124")).toBe(77);
  });

  it("tells postmasters from backends, including backends orphaned by a killed postmaster", () => {
    const postmaster = { pid: 10, ppid: 5, title: "/x/bin/postgres -D /d -p 54329" };
    const child = { pid: 11, ppid: 10, title: "postgres: checkpointer " };
    const orphan = { pid: 12, ppid: 1, title: "postgres: walwriter " };
    expect(postmastersOf([postmaster, child])).toEqual([postmaster]);
    expect(postmastersOf([orphan])).toEqual([]);
  });

  it("accepts a cluster of the server's major version and refuses any other, naming both", () => {
    expect(checkMajor("/d", 18, 18)).toEqual({ kind: "initialised", major: 18 });
    expect(() => checkMajor("/d", 16, 18)).toThrow(
      /created by PostgreSQL 16.*PostgreSQL 18.*Nothing was changed/s,
    );
    try {
      checkMajor("/d", 16, 18);
    } catch (error) {
      expect((error as EmbeddedPostgresError).code).toBe("INCOMPATIBLE_DATA_DIR");
    }
  });

  it("reads credentials and rejects malformed ones", () => {
    expect(parseCredentials('{"user":"postgres","password":"pw"}')).toEqual({
      user: "postgres",
      password: "pw",
    });
    expect(parseCredentials('{"user":"postgres"}')).toBeUndefined();
    expect(parseCredentials('{"user":"postgres","password":""}')).toBeUndefined();
    expect(parseCredentials("not json")).toBeUndefined();
    expect(parseCredentials("null")).toBeUndefined();
  });

  it("reads the major version from postgres --version", () => {
    expect(parseServerMajor("postgres (PostgreSQL) 18.4\n")).toBe(18);
    expect(() => parseServerMajor("nope")).toThrow(EmbeddedPostgresError);
  });
});

describe("startup failures from the server log", () => {
  it.each([
    [
      'FATAL:  lock file "postmaster.pid" already exists\nHINT:  Is another postmaster (PID 777) running in data directory "/d"?',
      "ALREADY_RUNNING",
      777,
    ],
    [
      'LOG:  could not bind IPv4 address "127.0.0.1": Address already in use\nWARNING:  could not create listen socket for "127.0.0.1"\nFATAL:  could not create any TCP/IP sockets',
      "PORT_IN_USE",
      undefined,
    ],
    [
      "FATAL:  pre-existing shared memory block (key 1, ID 2) is still in use",
      "STALE_SERVER_PROCESSES",
      undefined,
    ],
    [
      "FATAL:  database files are incompatible with server\nDETAIL:  The data directory was initialized by PostgreSQL version 16",
      "INCOMPATIBLE_DATA_DIR",
      undefined,
    ],
    ['FATAL:  data directory "/d" has wrong ownership', "NOT_ACCESSIBLE", undefined],
    ["FATAL:  something else entirely", "START_FAILED", undefined],
  ])("%s -> %s", (log, code, otherPid) => {
    const failure = classifyStartFailure(log);
    expect(failure.code).toBe(code);
    expect(failure.otherPid).toBe(otherPid);
  });
});
