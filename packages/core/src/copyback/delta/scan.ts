// scanWorkspace: the manifest of a workspace (exactly what takeManifest returns) computed with a
// stat cache, so a copyback reads only the files that changed since the last scan. Runs on the
// sandbox side; the cache never leaves the sandbox and the host never trusts it: the host
// verifies every byte it receives against the manifest (receive.ts) and the merge still runs
// its full conflict preflight against the host.
//
// Racy entries: a file written in the same instant as the scan could change again without its
// timestamps moving past the recorded ones; like git, entries whose ctime or mtime is not
// clearly older than the scan are never cached, so the next scan hashes them again.
import { lstatSync, readdirSync, readlinkSync, realpathSync, type Stats } from "node:fs";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { createLimiter, DEFAULT_FS_CONCURRENCY } from "../manifest/concurrency";
import { ManifestError, sanitizeFsError } from "../manifest/errors";
import { compileExclude } from "../manifest/exclude";
import { hashFile } from "../manifest/hash-file";
import { comparePaths } from "../manifest/paths";
import type { ManifestEntry } from "../manifest/types";
import type { CachedFileStat, WorkspaceScan, WorkspaceStatCache } from "./types";

export interface ScanOptions {
  exclude?: readonly string[];
  /** The cache returned by the previous scan of this workspace (absent: hash everything). */
  cache?: WorkspaceStatCache;
  concurrency?: number;
  /**
   * How long before the scan an entry must have last changed to be cached (default 2 s). 0 only
   * when nothing can write the tree during the scan and the caller lets the clock move on by more
   * than one timestamp tick before anything may write it again (the local provider's seed:
   * no process runs in the sandbox then). A later write then always moves ctime past the record.
   */
  racyWindowMs?: number;
}

/** Entries changed less than this long before the scan began are not cached (racy). */
const RACY_WINDOW_MS = 2_000;
const ENTRIES_PER_TURN = 1000;

export async function scanWorkspace(root: string, opts: ScanOptions = {}): Promise<WorkspaceScan> {
  const excluded = compileExclude(opts.exclude);
  const limit = createLimiter(opts.concurrency ?? DEFAULT_FS_CONCURRENCY);
  const previous = opts.cache?.version === 1 ? opts.cache.files : {};
  const racyWindowMs = opts.racyWindowMs ?? RACY_WINDOW_MS;
  // Date.now() counts whole milliseconds and a file's ctime does not: a file written earlier in
  // the current millisecond has a ctimeMs above Date.now(). Without a racy window (nothing writes
  // during the scan, and the caller waits past a clock tick before anything may) such a file is as
  // old as any other, so the bound is the next millisecond; otherwise a strict window.
  const cacheableBefore = racyWindowMs === 0 ? Date.now() + 1 : Date.now() - racyWindowMs;
  let rootReal: string;
  try {
    rootReal = realpathSync(root);
    if (!lstatSync(rootReal).isDirectory()) throw new Error("not a directory");
  } catch {
    throw new ManifestError(
      "manifest_root_invalid",
      "The manifest root does not exist or is not a directory",
    );
  }
  // The root is a realpath: plain concatenation builds the same paths path.join would.
  const absolute = (rel: string) => (rel === "" ? rootReal : `${rootReal}/${rel}`);

  const entries: ManifestEntry[] = [];
  // New cache records (files hashed now), and the files whose previous record still holds.
  const hashed: [string, CachedFileStat][] = [];
  const reused: string[] = [];
  const toHash: { rel: string; stat: Stats }[] = [];
  let sinceYield = 0;
  try {
    // Metadata only, synchronously (microseconds per call); the event loop gets a turn every
    // thousand entries. Contents are read only for files the cache cannot vouch for.
    const pending = [""];
    while (pending.length > 0) {
      const dir = pending.pop() as string;
      // Both forms of each child's path from the parent's, once per directory.
      const absoluteDir = absolute(dir);
      const relativePrefix = dir === "" ? "" : `${dir}/`;
      for (const dirent of readdirSync(absoluteDir, { withFileTypes: true })) {
        if (++sinceYield >= ENTRIES_PER_TURN) {
          sinceYield = 0;
          await yieldToEventLoop();
        }
        const rel = relativePrefix + dirent.name;
        if (excluded(rel)) continue;
        const abs = `${absoluteDir}/${dirent.name}`;
        // A link needs no lstat: it is read, never followed, and its mode means nothing.
        if (dirent.isSymbolicLink()) {
          entries.push({ path: rel, type: "symlink", mode: 0o777, target: readlinkSync(abs) });
          continue;
        }
        const stat = lstatSync(abs);
        if (stat.isFile()) {
          const cached = previous[rel];
          if (cached !== undefined && sameFile(cached, stat)) {
            entries.push({
              path: rel,
              type: "file",
              mode: cached.mode,
              sha256: cached.sha256,
              size: cached.size,
            });
            reused.push(rel);
          } else {
            toHash.push({ rel, stat });
          }
        } else if (stat.isDirectory()) {
          entries.push({ path: rel, type: "directory", mode: stat.mode & 0o777 });
          pending.push(rel);
        } else if (stat.isSymbolicLink()) {
          // Replaced by a link since it was listed.
          entries.push({ path: rel, type: "symlink", mode: 0o777, target: readlinkSync(abs) });
        } else {
          throw new ManifestError(
            "unsupported_entry",
            `${JSON.stringify(rel)} is not a regular file, directory or symlink`,
            rel,
          );
        }
      }
    }
    let hashedBytes = 0;
    await Promise.all(
      toHash.map(({ rel, stat }) =>
        limit(async () => {
          const read = await hashFile(absolute(rel));
          if (!read.isFile) {
            throw new ManifestError(
              "unsupported_entry",
              `${JSON.stringify(rel)} changed type while it was read`,
              rel,
            );
          }
          hashedBytes += read.size;
          entries.push({
            path: rel,
            type: "file",
            mode: read.mode,
            sha256: read.sha256,
            size: read.size,
          });
          // The stat taken before reading: if the file changed meanwhile, its ctime moved on
          // and the next scan hashes it again.
          if (stat.ctimeMs < cacheableBefore && stat.mtimeMs < cacheableBefore) {
            const record: CachedFileStat = {
              size: read.size,
              mode: read.mode,
              ino: stat.ino,
              mtimeMs: stat.mtimeMs,
              ctimeMs: stat.ctimeMs,
              sha256: read.sha256,
            };
            hashed.push([rel, record]);
          }
        }),
      ),
    );
    entries.sort((a, b) => comparePaths(a.path, b.path));
    return {
      manifest: { version: 1, entries },
      cache: nextCache(opts.cache, previous, reused, hashed),
      hashedFiles: toHash.length,
      hashedBytes,
    };
  } catch (error) {
    throw sanitizeFsError(error, [{ root: rootReal }]);
  }
}

/**
 * The cache for the next scan. When nothing new was cached, that is the previous cache itself (no
 * record of 10,000 keys built again, and the local provider writes nothing): the records that
 * did not hold (changed or removed files) can never hold again, because a file's ctime only moves
 * on, so keeping them costs a few bytes and never a wrong match. They go with the next cache that
 * is built (a file hashed and cached).
 */
function nextCache(
  given: WorkspaceStatCache | undefined,
  previous: Record<string, CachedFileStat>,
  reused: readonly string[],
  hashed: readonly [string, CachedFileStat][],
): WorkspaceStatCache {
  if (given?.version === 1 && hashed.length === 0) return given;
  const files: Record<string, CachedFileStat> = {};
  for (const rel of reused) files[rel] = previous[rel] as CachedFileStat;
  for (const [rel, record] of hashed) files[rel] = record;
  return { version: 1, files };
}

function sameFile(cached: CachedFileStat, stat: Stats): boolean {
  return (
    cached.size === stat.size &&
    cached.mode === (stat.mode & 0o777) &&
    cached.ino === stat.ino &&
    cached.mtimeMs === stat.mtimeMs &&
    cached.ctimeMs === stat.ctimeMs
  );
}
