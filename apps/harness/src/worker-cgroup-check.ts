// Issue 22 part 5: the harness's stop evidence for a worker-cgroup stack, read on the harness's own
// host. A worker joined a group of its own before starting any child (core's
// providers/local/worker-cgroup.ts), so its children, tar included, are in that group or below
// it. The harness signs only when the group the receipt names, inside the stack's configured
// parent, on this boot, exists and holds no process in it or in any group below it.
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { HarnessRefusalCode, WorkerCgroupIdentity } from "@copyback/core/platforms";
import type { WorkerCgroupStack } from "./env";
import type { StopDecision } from "./decide-stop";

const refuse = (code: HarnessRefusalCode, message: string): StopDecision => ({ kind: "refuse", code, message });

/** This host's boot id (a worker cgroup's identity names the boot it was made on). */
export async function readHostBootId(): Promise<string | null> {
  const text = await readFile("/proc/sys/kernel/random/boot_id", "utf8").catch(() => null);
  return text?.trim() || null;
}

/** Where the group must be: a direct child of the stack's parent, same hierarchy, this boot. */
export function decideCgroupPlace(identity: WorkerCgroupIdentity, stack: WorkerCgroupStack, bootId: string | null): StopDecision | null {
  if (identity.version !== stack.version) return refuse("deployment_not_owned", "The worker cgroup is in another cgroup hierarchy than this stack's.");
  const parent = stack.parentPath.replace(/\/+$/, "");
  const slash = identity.path.lastIndexOf("/");
  if (identity.path.slice(0, slash) !== parent) return refuse("deployment_not_owned", "The worker cgroup is not a group of this stack's parent.");
  // Another boot (or another host: the harness sees only its own) proves nothing about that group.
  if (bootId === null) return refuse("evidence_unavailable", "The harness cannot read this host's boot id.");
  if (identity.bootId !== bootId) return refuse("deployment_not_owned", "The worker cgroup was on another boot or host than the harness's.");
  return null;
}

export type CgroupRead = { kind: "empty" } | { kind: "populated"; processes: number } | { kind: "missing" } | { kind: "unavailable"; message: string };

/** The processes in a group and every group below it (v1 lists each group's own members only). */
async function members(dir: string): Promise<number> {
  let count = (await readFile(join(dir, "cgroup.procs"), "utf8")).split("\n").filter(Boolean).length;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) count += await members(join(dir, entry.name));
  }
  return count;
}

export async function readWorkerCgroup(stack: WorkerCgroupStack, identity: WorkerCgroupIdentity): Promise<CgroupRead> {
  // The configured parent must be a cgroup here: a wrong mount point reads as unavailable, never as empty.
  const parentProcs = join(stack.mountPoint, stack.parentPath, "cgroup.procs");
  const parentOk = await readFile(parentProcs, "utf8").then(() => true, () => false);
  if (!parentOk) return { kind: "unavailable", message: "The stack's parent cgroup cannot be read on this host." };
  const dir = join(stack.mountPoint, identity.path);
  try {
    const processes = await members(dir);
    return processes === 0 ? { kind: "empty" } : { kind: "populated", processes };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A group that vanished while it was read may be any of the two: read again next time.
    if (code === "ENOENT") return (await readFile(join(dir, "cgroup.procs"), "utf8").then(() => true, () => false)) ? { kind: "unavailable", message: "The worker cgroup changed while it was read." } : { kind: "missing" };
    return { kind: "unavailable", message: "The worker cgroup cannot be read." };
  }
}

export function decideCgroupStop(read: CgroupRead): StopDecision {
  switch (read.kind) {
    case "empty":
      return { kind: "sign" };
    case "populated":
      return { kind: "refuse", code: "deployment_live", message: `The worker cgroup still holds ${read.processes} process${read.processes === 1 ? "" : "es"}.`, status: "POPULATED" };
    case "missing":
      // A group that is gone proves nothing: it may never have held the worker here.
      return refuse("deployment_missing", "The worker cgroup does not exist on this host.");
    case "unavailable":
      return refuse("evidence_unavailable", read.message);
  }
}
