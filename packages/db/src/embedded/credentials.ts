// The superuser password of an embedded cluster, generated once and kept in
// <instanceRoot>/postgres/credentials.json with mode 0600.
//
// Why a password rather than `trust` on loopback: trust lets every local account and every
// process on the machine (including agents running in local sandboxes) connect as superuser.
// With scram-sha-256 only someone who can read this owner-only file can.
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { EmbeddedPostgresError } from "./errors";
import { SUPERUSER } from "./layout";

export interface Credentials {
  user: string;
  password: string;
}

export async function readCredentials(file: string): Promise<Credentials | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new EmbeddedPostgresError(
      "CREDENTIALS_MISSING",
      `Cannot read ${file}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const parsed = parseCredentials(text);
  if (!parsed) {
    throw new EmbeddedPostgresError(
      "CREDENTIALS_MISSING",
      `${file} is not valid (expected {"user": "...", "password": "..."}). Restore it from a backup; the database itself was not touched.`,
    );
  }
  return parsed;
}

export function parseCredentials(text: string): Credentials | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== "object" || value === null) return undefined;
    const { user, password } = value as Record<string, unknown>;
    if (
      typeof user !== "string" ||
      typeof password !== "string" ||
      user.length === 0 ||
      password.length === 0
    )
      return undefined;
    return { user, password };
  } catch {
    return undefined;
  }
}

/** The credentials of an existing cluster: without them nobody can log in, so their absence is an error. */
export async function requireCredentials(file: string, dataDir: string): Promise<Credentials> {
  const existing = await readCredentials(file);
  if (existing) return existing;
  throw new EmbeddedPostgresError(
    "CREDENTIALS_MISSING",
    `The embedded database in ${dataDir} exists but its password file ${file} is missing. Restore credentials.json from a backup (the data was not touched), or move the data directory aside to start a new, empty database.`,
  );
}

/**
 * Credentials for a cluster about to be created: reuse a file that is already there, or write a
 * new one. Creation is exclusive (hard link of a private temp file), so two processes racing to
 * initialise the same instance root end up with the same password.
 */
export async function credentialsForNewCluster(file: string): Promise<Credentials> {
  const existing = await readCredentials(file);
  if (existing) return existing;
  const fresh: Credentials = { user: SUPERUSER, password: randomBytes(24).toString("base64url") };
  const temp = path.join(
    path.dirname(file),
    `.credentials.${process.pid}.${randomBytes(4).toString("hex")}.tmp`,
  );
  await fs.writeFile(temp, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  try {
    await fs.link(temp, file);
    return fresh;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const winner = await readCredentials(file);
    if (!winner) throw error;
    return winner;
  } finally {
    await fs.rm(temp, { force: true });
  }
}
