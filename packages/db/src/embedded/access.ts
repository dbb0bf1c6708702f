// The cluster's directories must be reachable by the OS user the server runs as. As root that is
// the `postgres` account, which cannot enter root's 0700 directories: we open exactly what we own
// (traverse-only, never listing) and name anything else in a clear error instead of touching it.
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { ClusterLocation } from "./cluster-location";
import { EmbeddedPostgresError } from "./errors";
import type { InstanceLayout } from "./layout";
import { spawnIdentity, type ServerUser } from "./server-user";

const execFileAsync = promisify(execFile);

/**
 * The one widening made to an instance root: others may traverse it (o+x), never list or write
 * it, so the server's account reaches `postgres/data` by name. `copyback doctor` accepts exactly
 * this bit on a root whose cluster lives in place, and says why (chmod 700 would cut the server
 * off from its data).
 */
export const SERVER_TRAVERSE_BIT = 0o001;

export async function prepareClusterDirectories(args: {
  layout: InstanceLayout;
  location: ClusterLocation;
  user: ServerUser;
  binaries: string[];
  log: (line: string) => void;
}): Promise<void> {
  const { layout, location, user, binaries, log } = args;
  await fs.mkdir(layout.postgresDir, { recursive: true, mode: 0o700 });
  if (user.kind === "current") return;

  if (location.relocated) {
    // Root-owned; `others` may traverse the base, only the server's group the cluster's home.
    await fs.mkdir(path.dirname(location.home), { recursive: true, mode: 0o711 });
    await fs.mkdir(location.home, { recursive: true, mode: 0o710 });
    await fs.chown(location.home, 0, user.gid);
    await fs.chmod(location.home, 0o710);
    await fs.writeFile(path.join(location.home, "INSTANCE_ROOT"), `${layout.instanceRoot}\n`, {
      mode: 0o600,
    });
  } else {
    // <instanceRoot>/postgres: root-owned, the server's group may traverse; credentials.json in it
    // stays root-only (0600).
    await fs.chown(layout.postgresDir, 0, user.gid);
    await fs.chmod(layout.postgresDir, 0o710);
    if ((await firstBlockedPath(user, [layout.postgresDir])) !== undefined) {
      const stat = await fs.stat(layout.instanceRoot);
      if (stat.uid === process.getuid?.() && (stat.mode & SERVER_TRAVERSE_BIT) === 0) {
        // Traverse-only for others: the server can reach postgres/ by name; nobody can list the root.
        await fs.chmod(layout.instanceRoot, (stat.mode & 0o7777) | SERVER_TRAVERSE_BIT);
        log(
          `made ${layout.instanceRoot} traversable (o+x) so the "${user.name}" user can reach its data directory`,
        );
      }
    }
  }
  const blocked = await firstBlockedPath(user, [location.home, ...binaries]);
  if (blocked !== undefined) {
    throw new EmbeddedPostgresError(
      "NOT_ACCESSIBLE",
      `PostgreSQL runs as the user "${user.name}" (we are root), and that user cannot enter ${blocked}. ` +
        `Put the instance root somewhere it can reach (set COPYBACK_HOME, e.g. /var/lib/copyback/home), or run Copyback as a non-root user.`,
    );
  }
}

/**
 * Pure: every path a process must traverse to reach each target, outermost first, each once
 * ("/", "/root", "/root/copyback", ... "/root/copyback/node_modules/.../bin/postgres").
 */
export function ancestorChain(targets: readonly string[]): string[] {
  const chain: string[] = [];
  const seen = new Set<string>();
  for (const target of targets) {
    const parts: string[] = [];
    for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
      parts.unshift(dir);
      if (path.dirname(dir) === dir) break;
    }
    for (const part of parts) {
      if (seen.has(part)) continue;
      seen.add(part);
      chain.push(part);
    }
  }
  return chain;
}

/** The first path (checking every ancestor, outermost first) the user cannot traverse. */
export async function firstBlockedPath(
  user: ServerUser,
  targets: string[],
): Promise<string | undefined> {
  if (user.kind === "current") return undefined;
  const chain = ancestorChain(targets);
  // access(2) resolves the whole path with the caller's credentials, so `test -x` run as that
  // user is the authoritative answer (ACLs and group membership included).
  const script = 'for p do test -x "$p" || { printf "%s" "$p"; exit 1; }; done';
  try {
    await execFileAsync("/bin/sh", ["-c", script, "sh", ...chain], spawnIdentity(user));
    return undefined;
  } catch (error) {
    const stdout = (error as { stdout?: string }).stdout;
    return stdout && stdout.length > 0 ? stdout : targets[0];
  }
}
