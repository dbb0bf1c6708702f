// The host side of the three-way merge, read now, under the lock. Only what the plan can need
// is read: the paths the sandbox changed, their ancestors (to refuse writes below host links or
// into directories the host removed), and the full subtree of every directory the sandbox
// removes (to find entries the host created there since the baseline). Paths the sandbox did
// not change keep their host state whatever it is, so reading them would only cost time.
// Links are never followed: a child is looked at only when its host parent is a real directory.
import { lstat, readdir, readlink } from "node:fs/promises";
import path from "node:path";
import { createLimiter, runPool } from "../manifest/concurrency";
import { ManifestError } from "../manifest/errors";
import type { ExcludeMatcher } from "../manifest/exclude";
import { hashFile } from "../manifest/hash-file";
import { ancestorsOf, depthOf, joinRelative, parentOf } from "../manifest/paths";
import type { ManifestEntry } from "../manifest/types";
import { isTemporaryName } from "./temporaries";

export interface HostProbeRequest {
  targetReal: string;
  /** Paths whose host state the plan compares (the sandbox's changed paths). */
  paths: readonly string[];
  /** Directories the sandbox removes or replaces: their host subtrees are listed in full. */
  removedDirectories: readonly string[];
  /** Whether a host file of this size must be hashed (a compared entry could be equal). */
  needsHash(path: string, size: number): boolean;
  excluded: ExcludeMatcher;
  concurrency: number;
}

export interface HostState {
  /** Host entries found; a known path missing here is absent on the host. */
  entries: Map<string, ManifestEntry>;
  /** Every path whose host state was determined (probed paths, ancestors, removed subtrees). */
  known: Set<string>;
  /** Directories inside removed subtrees that directly hold excluded entries (preserved). */
  excludedIn: Set<string>;
}

export type HostProbe = (request: HostProbeRequest) => Promise<HostState>;

export const probeHost: HostProbe = async (request) => {
  const { targetReal, excluded } = request;
  const limit = createLimiter(request.concurrency);
  const entries = new Map<string, ManifestEntry>();
  const known = new Set<string>();
  const excludedIn = new Set<string>();
  const absolute = (rel: string): string => path.join(targetReal, ...rel.split("/"));

  const readEntry = async (rel: string): Promise<void> => {
    known.add(rel);
    let stat;
    try {
      stat = await limit(() => lstat(absolute(rel)));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return;
      throw error;
    }
    const mode = stat.mode & 0o777;
    if (stat.isDirectory()) {
      entries.set(rel, { path: rel, type: "directory", mode });
    } else if (stat.isSymbolicLink()) {
      entries.set(rel, {
        path: rel,
        type: "symlink",
        mode,
        target: await limit(() => readlink(absolute(rel))),
      });
    } else if (stat.isFile()) {
      if (!request.needsHash(rel, stat.size)) {
        entries.set(rel, { path: rel, type: "file", mode, size: stat.size });
        return;
      }
      const hashed = await limit(() => hashFile(absolute(rel)));
      if (!hashed.isFile)
        throw new ManifestError(
          "unsupported_entry",
          `${JSON.stringify(rel)} changed type while it was read`,
          rel,
        );
      entries.set(rel, {
        path: rel,
        type: "file",
        mode: hashed.mode,
        size: hashed.size,
        sha256: hashed.sha256,
      });
    } else {
      throw new ManifestError(
        "unsupported_entry",
        `${JSON.stringify(rel)} on the host is not a regular file, directory or symlink`,
        rel,
      );
    }
  };

  // Level by level, so a parent's type is known before its children are looked at.
  const wanted = new Set<string>();
  for (const p of request.paths) {
    wanted.add(p);
    for (const ancestor of ancestorsOf(p)) wanted.add(ancestor);
  }
  const levels: string[][] = [];
  for (const p of wanted) (levels[depthOf(p) - 1] ??= []).push(p);
  // The levels hold every path now; the set's table (200,000 entries at --large) is not kept
  // alive beside `known` for the rest of the probe.
  wanted.clear();
  for (const level of levels) {
    if (level === undefined) continue;
    // A pool as wide as the limiter, not one promise per path at once: a level of 190,000 files
    // held that many pending promises and closures (the probe's memory must not grow with the workspace).
    await runPool(level, request.concurrency, async (rel) => {
      const parent = parentOf(rel);
      if (parent !== "" && entries.get(parent)?.type !== "directory") {
        known.add(rel); // below a host file, link or missing directory: absent as a path
        return;
      }
      await readEntry(rel);
    });
  }

  const walk = async (dir: string): Promise<void> => {
    const dirents = await limit(() => readdir(absolute(dir), { withFileTypes: true }));
    await Promise.all(
      dirents.map(async (dirent) => {
        const child = joinRelative(dir, dirent.name);
        if (excluded(child)) {
          excludedIn.add(dir);
          return;
        }
        // Stray temporaries were removed before the probe; one that reappears is ours, not the host's.
        if (isTemporaryName(dirent.name) && !dirent.isDirectory()) return;
        if (!known.has(child)) await readEntry(child);
        if (entries.get(child)?.type === "directory") await walk(child);
      }),
    );
  };
  const removed = new Set(request.removedDirectories);
  const topmost = request.removedDirectories.filter(
    (dir) => !ancestorsOf(dir).some((ancestor) => removed.has(ancestor)),
  );
  await Promise.all(topmost.filter((dir) => entries.get(dir)?.type === "directory").map(walk));
  return { entries, known, excludedIn };
};
