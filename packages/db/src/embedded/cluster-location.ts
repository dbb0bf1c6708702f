// Where the cluster's files physically live.
//
// Normally in <instanceRoot>/postgres/data. As root the server runs as the `postgres` account,
// which cannot enter directories like /root (mode 0700), where the default instance root
// (~/.copyback) sits. Widening /root for everyone would expose root's files, so instead the
// cluster of such an instance root lives in /var/lib/copyback/cluster-<id>/data and
// <instanceRoot>/postgres/data is a symlink to it. The password file stays in the instance root.
import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { firstBlockedPath } from "./access";
import type { InstanceLayout } from "./layout";
import type { ServerUser } from "./server-user";

export const RELOCATION_BASE = "/var/lib/copyback";

export interface ClusterLocation {
  /** The directory the server is given (`-D`). */
  dataDir: string;
  /** Its parent: initdb stages here, on the same filesystem, then renames into place. */
  home: string;
  /** True when the cluster lives under RELOCATION_BASE and the instance root holds a symlink. */
  relocated: boolean;
}

/** Read-only: decides where the cluster is or will be; creates nothing. */
export async function locateCluster(
  layout: InstanceLayout,
  user: ServerUser,
): Promise<ClusterLocation> {
  const inPlace: ClusterLocation = {
    dataDir: layout.dataDir,
    home: layout.postgresDir,
    relocated: false,
  };
  let stat: Stats | undefined;
  try {
    stat = await fs.lstat(layout.dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  if (stat?.isSymbolicLink()) {
    const target = path.resolve(path.dirname(layout.dataDir), await fs.readlink(layout.dataDir));
    return { dataDir: target, home: path.dirname(target), relocated: true };
  }
  if (stat || user.kind === "current") return inPlace;
  // A new cluster as root: keep it in place unless something outside the instance root (which we
  // may open up ourselves) bars the server account's way.
  const blocked = await firstBlockedPath(user, [layout.postgresDir]);
  if (blocked === undefined || isWithin(blocked, layout.instanceRoot)) return inPlace;
  const id = createHash("sha256").update(layout.instanceRoot).digest("hex").slice(0, 16);
  const home = path.join(RELOCATION_BASE, `cluster-${id}`);
  return { dataDir: path.join(home, "data"), home, relocated: true };
}

function isWithin(candidate: string, dir: string): boolean {
  const relative = path.relative(dir, candidate);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}
