// `--hosts N` (issue 23 part 3): the hosts of one torture run. Each host is an instance root of its
// own (COPYBACK_HOME, on a small tmpfs of its own where mount works, so the nemesis can fill it)
// with its own host id (COPYBACK_HOST_ID) and its own workers; all share one PostgreSQL. With one
// host nothing changes: no host id is set (the workers generate theirs into the root, as before)
// and the workspaces are left unbound (the first claim binds them).
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";

export interface TortureHost {
  index: number;
  /** COPYBACK_HOST_ID of its workers; null with one host (the workers' own generated id). */
  id: string | null;
  /** Its instance root. */
  home: string;
  /** A tmpfs of its own (the full-disk fault can fill it). */
  diskMount: boolean;
}

export const HOST_IDS = ["torture-a", "torture-b", "torture-c", "torture-d"];

/** Creates each host's instance root under `work` (one host: `work/home`, as before). */
export function createHosts(work: string, count: number, warn: (m: string) => void): TortureHost[] {
  if (!Number.isInteger(count) || count < 1 || count > HOST_IDS.length) throw new Error(`--hosts must be 1 to ${HOST_IDS.length}, not ${count}`);
  const hosts: TortureHost[] = [];
  for (let index = 0; index < count; index++) {
    const home = path.join(work, count === 1 ? "home" : `home-${HOST_IDS[index]}`);
    mkdirSync(home, { recursive: true, mode: 0o700 });
    let diskMount = false;
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=1024m,mode=0700", "tmpfs", home], { stdio: "ignore" });
      diskMount = true;
    } catch {
      warn(`mount -t tmpfs failed here: the full-disk fault is not injected on ${home} (an ordinary directory)`);
    }
    hosts.push({ index, id: count === 1 ? null : HOST_IDS[index]!, home, diskMount });
  }
  return hosts;
}

/** Unmounts the hosts' tmpfs roots (lazily: a leftover process may still hold one). */
export function unmountHosts(hosts: readonly TortureHost[]): void {
  for (const host of hosts) {
    if (!host.diskMount) continue;
    try {
      execFileSync("umount", ["-l", host.home], { stdio: "ignore" });
    } catch {
      /* busy */
    }
  }
}
