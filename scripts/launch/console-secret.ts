// Local mode's console secret: the console trusts the person at this
// machine, not every local process. The secret lives in `<COPYBACK_HOME>/console-secret` (0600,
// created once; bubblewrap sandboxes see an empty tmpfs over the instance root), only the web
// process gets it (COPYBACK_CONSOLE_SECRET), and the launcher prints the one sign-in link that
// carries it. Rotate it by deleting the file and restarting: every browser signs in again.
// The E2E harness reads the same file under its own COPYBACK_HOME.
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { localSignInUrl } from "../../apps/web/src/server/auth/local-console";

export const CONSOLE_SECRET_FILE = "console-secret";
const MIN_SECRET_LENGTH = 32;

/** The instance's console secret, created on first use (never overwritten; two launchers agree). */
export async function ensureConsoleSecret(home: string): Promise<{ secret: string; file: string }> {
  const file = path.join(home, CONSOLE_SECRET_FILE);
  await fs.mkdir(home, { recursive: true, mode: 0o700 });
  try {
    await fs.writeFile(file, `${randomBytes(32).toString("base64url")}\n`, { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stat = await fs.lstat(file);
  if (!stat.isFile()) throw new Error(`${file} is not a regular file; delete it to have a new one generated`);
  if ((stat.mode & 0o077) !== 0) {
    throw new Error(`${file} is readable by other users (mode ${(stat.mode & 0o777).toString(8)}); run: chmod 600 ${file}`);
  }
  const secret = (await fs.readFile(file, "utf8")).trim();
  if (secret.length < MIN_SECRET_LENGTH || !/^[A-Za-z0-9_-]+$/.test(secret)) {
    throw new Error(`${file} does not hold a usable secret (at least ${MIN_SECRET_LENGTH} base64url characters); delete it to have a new one generated`);
  }
  return { secret, file };
}

/** What the launcher needs for local mode: the web process's variable and the line to print once. */
export async function localConsoleAccess(home: string, consoleUrl: string): Promise<{ webEnv: Record<string, string>; signInLine: string }> {
  const { secret, file } = await ensureConsoleSecret(home);
  return {
    webEnv: { COPYBACK_CONSOLE_SECRET: secret },
    signInLine: `sign in by opening ${localSignInUrl(consoleUrl, secret)}  (secret in ${file}; scripts use a board API key)`,
  };
}
