import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EmbeddedPostgresError } from "../embedded/errors";
import { describeTarget, parseDatabaseUrl, redactPassword } from "./database-url";
import { DatabaseConnectionError } from "./errors";
import { defaultInstanceRoot, embeddedPortFrom, instanceRootFrom } from "./instance-root";

describe("instance root and port from the environment", () => {
  it("uses COPYBACK_HOME when set, ~/.copyback otherwise", () => {
    expect(defaultInstanceRoot()).toBe(path.join(os.homedir(), ".copyback"));
    expect(instanceRootFrom({})).toBe(defaultInstanceRoot());
    expect(instanceRootFrom({ COPYBACK_HOME: "  " })).toBe(defaultInstanceRoot());
    expect(instanceRootFrom({ COPYBACK_HOME: "/srv/cb" })).toBe("/srv/cb");
    expect(instanceRootFrom({ COPYBACK_HOME: "~/cb" })).toBe(path.join(os.homedir(), "cb"));
    expect(instanceRootFrom({ COPYBACK_HOME: "rel/cb" })).toBe(path.resolve("rel/cb"));
  });

  it("reads COPYBACK_DB_PORT, defaulting to 54329 and refusing bad values", () => {
    expect(embeddedPortFrom({})).toBe(54329);
    expect(embeddedPortFrom({ COPYBACK_DB_PORT: "55000" })).toBe(55000);
    for (const bad of ["5432", "abc", "12.5", "99999", "-1"]) {
      expect(() => embeddedPortFrom({ COPYBACK_DB_PORT: bad })).toThrow(EmbeddedPostgresError);
    }
  });
});

describe("database URLs in messages", () => {
  it("describes a URL by user, host, port and database, never the password", () => {
    const target = parseDatabaseUrl("postgresql://app:p%40ss@db.example:6543/prod");
    expect(target).toEqual({
      host: "db.example",
      port: 6543,
      database: "prod",
      user: "app",
      password: "p@ss",
    });
    expect(describeTarget(target)).toBe("app@db.example:6543/prod");
    expect(describeTarget(parseDatabaseUrl("postgres://u@[::1]/d"))).toBe("u@[::1]:5432/d");
  });

  it("refuses a malformed URL without echoing it", () => {
    const bad = "postgresql://app:topsecret@db:notaport/x";
    expect(() => parseDatabaseUrl(bad)).toThrow(DatabaseConnectionError);
    try {
      parseDatabaseUrl(bad);
    } catch (error) {
      expect((error as DatabaseConnectionError).code).toBe("DATABASE_URL_INVALID");
      expect((error as Error).message).not.toContain("topsecret");
    }
    expect(() => parseDatabaseUrl("mysql://a@b/c")).toThrow(/postgresql:\/\//);
  });

  it("redacts the password in both raw and encoded form", () => {
    expect(redactPassword("auth failed for p@ss and p%40ss", "p@ss")).toBe(
      "auth failed for *** and ***",
    );
    expect(redactPassword("nothing here", "")).toBe("nothing here");
  });
});
