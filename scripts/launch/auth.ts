// What authenticated mode needs from the launcher: a session-signing secret that survives
// restarts (sessions stay valid) without anyone having to invent one, and demo passwords.
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { PrismaClient } from "@copyback/db";
import { DEMO_PASSWORD, ensureDemoPasswords } from "../../apps/web/src/server/auth/credentials";
import type { LaunchEnv } from "./env";

const SECRET_FILE = "auth-secret";
const MIN_SECRET_LENGTH = 32;

/**
 * COPYBACK_AUTH_SECRET or BETTER_AUTH_SECRET when set; otherwise `<COPYBACK_HOME>/auth-secret`,
 * created once with 32 random bytes, readable by its owner only (0600).
 */
export async function ensureAuthSecret(env: LaunchEnv): Promise<{ secret: string; source: string }> {
  const configured = env.COPYBACK_AUTH_SECRET ?? env.BETTER_AUTH_SECRET;
  if (configured) return { secret: configured, source: env.COPYBACK_AUTH_SECRET ? "COPYBACK_AUTH_SECRET" : "BETTER_AUTH_SECRET" };
  const file = path.join(env.COPYBACK_HOME, SECRET_FILE);
  await fs.mkdir(env.COPYBACK_HOME, { recursive: true, mode: 0o700 });
  try {
    // "wx": never overwrite, so two launchers racing on a fresh home agree on the first secret.
    await fs.writeFile(file, `${randomBytes(32).toString("base64url")}\n`, { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stat = await fs.stat(file);
  if ((stat.mode & 0o077) !== 0) {
    throw new Error(`${file} is readable by other users (mode ${(stat.mode & 0o777).toString(8)}); run: chmod 600 ${file}`);
  }
  const secret = (await fs.readFile(file, "utf8")).trim();
  if (secret.length < MIN_SECRET_LENGTH) throw new Error(`${file} holds fewer than ${MIN_SECRET_LENGTH} characters; delete it to have a new one generated`);
  return { secret, source: file };
}

/** Demo users (the reserved `.test` domain) without a password get the documented demo password. */
export async function ensureDemoSignIns(prisma: PrismaClient): Promise<{ password: string; emails: string[] }> {
  return { password: DEMO_PASSWORD, emails: await ensureDemoPasswords(prisma) };
}
