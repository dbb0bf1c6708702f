// Isolation with bubblewrap (Debian `bubblewrap`, DESIGN.md section 4): the whole filesystem
// read-only, the instance root (other sandboxes, the database, credentials) hidden behind an empty
// tmpfs, only this sandbox's workspace and agent directory writable, a private /tmp and /run (no
// host sockets, e.g. PostgreSQL's), its own PID namespace (killing its init empties it), killed
// with its parent, a new session (no terminal injection), and no network unless the environment
// allows it.
import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { delimiter, join } from "node:path";

export interface BubblewrapMounts {
  instanceRoot: string;
  workspace: string;
  agentDir: string;
  cwd: string;
  allowNetwork: boolean;
}

/** The fd bubblewrap writes {"child-pid": N} to: the host PID of the sandbox's init. */
export const INFO_FD = 3;

/** Pure: bwrap's arguments for one command. Order matters: later mounts go on top of earlier ones. */
export function bubblewrapArgs(m: BubblewrapMounts, argv: readonly string[]): string[] {
  return [
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    "--tmpfs", "/tmp",
    "--tmpfs", "/run",
    "--tmpfs", m.instanceRoot,
    "--bind", m.workspace, m.workspace,
    "--bind", m.agentDir, m.agentDir,
    "--unshare-pid",
    ...(m.allowNetwork ? [] : ["--unshare-net"]),
    "--die-with-parent",
    "--new-session",
    "--info-fd", String(INFO_FD),
    "--chdir", m.cwd,
    "--",
    ...argv,
  ];
}

export async function findOnPath(name: string, searchPath: string): Promise<string | null> {
  for (const dir of searchPath.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

const PROBE_TIMEOUT_MS = 10_000;
const probes = new Map<string, Promise<string | null>>();

/**
 * The bwrap binary when it is on the search path and actually works here (user namespaces may
 * be disabled, e.g. in some containers); probed once per search path and cached.
 */
export function usableBubblewrap(searchPath: string): Promise<string | null> {
  let probe = probes.get(searchPath);
  if (!probe) {
    probe = (async () => {
      const bwrap = await findOnPath("bwrap", searchPath);
      if (!bwrap) return null;
      const flags = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session", "true"];
      return new Promise<string | null>((resolve) => {
        execFile(bwrap, flags, { timeout: PROBE_TIMEOUT_MS }, (error) => resolve(error ? null : bwrap));
      });
    })();
    probes.set(searchPath, probe);
  }
  return probe;
}
