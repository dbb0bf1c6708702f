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
  /** R-RC-5: the sandbox's inputs directory when it has one, bound read-only at the same path. */
  inputsDir?: string | null;
  /** R-PV-1: the sandbox's agent pack when it has one, bound read-only at the same path. */
  packDir?: string | null;
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
    ...(m.inputsDir ? ["--ro-bind", m.inputsDir, m.inputsDir] : []),
    ...(m.packDir ? ["--ro-bind", m.packDir, m.packDir] : []),
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
const PROBE_FLAGS = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session", "true"];

/** Whether agents of this host can be isolated, and when not, why (said by the launcher and the console). */
export type BubblewrapDiagnosis = { usable: true; bwrap: string } | { usable: false; reason: string };

export const BUBBLEWRAP_MISSING_REASON =
  "bubblewrap (bwrap) is not installed on this host, so agents run as plain processes with the controller's rights; install it (apt-get install bubblewrap) and restart";

/** Pure: the reason a bwrap that is installed could not make a sandbox, from the probe's outcome. */
export function explainProbeFailure(bwrap: string, outcome: { stderr: string; timedOut: boolean; code?: string | number | null }): string {
  if (outcome.timedOut) return `bubblewrap (${bwrap}) did not finish a test sandbox within ${PROBE_TIMEOUT_MS / 1000} s, so agents run as plain processes with the controller's rights`;
  const said = outcome.stderr.trim().split("\n")[0]?.trim() || `exit ${outcome.code ?? "?"}`;
  const hint = /namespace|Operation not permitted|EPERM|clone|setting up uid map|No permissions/i.test(said)
    ? ": this host (or its container) does not allow the namespaces bubblewrap needs (user, PID and network namespaces); allow them, e.g. sysctl kernel.unprivileged_userns_clone=1 or a container with --privileged / a seccomp profile that permits clone(CLONE_NEWUSER), and restart"
    : "";
  return `bubblewrap (${bwrap}) cannot make a sandbox here (${said})${hint}; agents run as plain processes with the controller's rights`;
}

const diagnoses = new Map<string, Promise<BubblewrapDiagnosis>>();

/**
 * Finds bwrap on the search path and runs one test sandbox with the flags every sandbox uses
 * (user namespaces may be disabled, e.g. in some containers); probed once per search path.
 */
export function diagnoseBubblewrap(searchPath: string): Promise<BubblewrapDiagnosis> {
  let diagnosis = diagnoses.get(searchPath);
  if (!diagnosis) {
    diagnosis = (async (): Promise<BubblewrapDiagnosis> => {
      const bwrap = await findOnPath("bwrap", searchPath);
      if (!bwrap) return { usable: false, reason: BUBBLEWRAP_MISSING_REASON };
      return new Promise<BubblewrapDiagnosis>((resolve) => {
        execFile(bwrap, PROBE_FLAGS, { timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
          if (!error) return resolve({ usable: true, bwrap });
          const failed = error as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null };
          resolve({ usable: false, reason: explainProbeFailure(bwrap, { stderr: String(stderr), timedOut: failed.killed === true, code: failed.code ?? null }) });
        });
      });
    })();
    diagnoses.set(searchPath, diagnosis);
  }
  return diagnosis;
}

/** The bwrap binary when it is on the search path and actually works here (see diagnoseBubblewrap). */
export async function usableBubblewrap(searchPath: string): Promise<string | null> {
  const diagnosis = await diagnoseBubblewrap(searchPath);
  return diagnosis.usable ? diagnosis.bwrap : null;
}
