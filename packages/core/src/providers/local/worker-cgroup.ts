// Issue 22 part 5, the worker-cgroup platform (opt-in, COPYBACK_WORKER_CGROUP=on): at start the
// worker makes a cgroup of its own beside the exec groups cgroups.ts makes (the `pids` hierarchy
// of cgroup v1, or the v2 unified one) and moves itself into it before it starts any child, so
// everything it forks, tar included, is in that group or below it, and every exec group it makes
// later nests inside it. The identity its owner receipts record is read back from
// /proc/self/cgroup, never assumed: a worker that could not join refuses to start.
import { randomBytes } from "node:crypto";
import { mkdir, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { readBootId } from "../../process/read-process-identity";
import { WORKER_CGROUP_PLATFORM, type WorkerCgroupIdentity, workerCgroupIdentity } from "../../platforms/platform-identity";
import { findParent, forgetCgroupParents, hierarchies, ownGroups } from "./cgroups";

export const WORKER_CGROUP_PREFIX = "copyback-worker-";

export interface JoinedWorkerCgroup {
  identity: WorkerCgroupIdentity;
  /** The group's directory on this host (for logs and tests). */
  dir: string;
}

/**
 * Where this process's worker groups would be made: the hierarchy's version, where it is mounted
 * and the parent's path inside it: exactly what a same-host harness's stack configuration names
 * (apps/harness HARNESS_STACKS, kind worker_cgroup). null where no group can be made.
 */
export async function workerCgroupPlace(): Promise<{ version: 1 | 2; mountPoint: string; parentPath: string } | null> {
  const parent = await findParent("pids");
  if (!parent) return null;
  const own = await ownGroups();
  const parentPath = parent.version === 1 ? own.v1.get("pids") : own.v2;
  const mount = (await hierarchies()).find((m) => m.version === parent.version && (m.version === 2 || m.controllers.includes("pids")));
  if (parentPath === undefined || parentPath === null || !mount) return null;
  return { version: parent.version, mountPoint: mount.mountPoint, parentPath };
}

/** Creates the worker's own group, moves this process into it and confirms the kernel says so. */
export async function joinWorkerCgroup(): Promise<JoinedWorkerCgroup> {
  const parent = await findParent("pids");
  if (!parent) throw new Error("worker cgroup: no writable cgroup (v1 pids or v2 with pids delegated) for this process");
  const bootId = await readBootId();
  if (!bootId) throw new Error("worker cgroup: the kernel's boot id cannot be read");
  const name = `${WORKER_CGROUP_PREFIX}${randomBytes(8).toString("hex")}`;
  const dir = join(parent.dir, name);
  await mkdir(dir);
  try {
    await writeFile(join(dir, "cgroup.procs"), String(process.pid));
  } catch (error) {
    await rmdir(dir).catch(() => undefined);
    throw new Error(`worker cgroup: cannot move the worker into ${dir}: ${(error as Error).message}`, { cause: error });
  }
  const own = await ownGroups();
  const path = parent.version === 1 ? own.v1.get("pids") : own.v2;
  const parsed = workerCgroupIdentity.safeParse({ kind: WORKER_CGROUP_PLATFORM, version: parent.version, path, bootId });
  if (!parsed.success || !path?.endsWith(`/${name}`)) {
    throw new Error(`worker cgroup: after joining ${dir}, /proc/self/cgroup names ${path ?? "no group"}`);
  }
  // Exec groups made from now on nest inside the worker's group.
  forgetCgroupParents();
  return { identity: parsed.data, dir };
}
