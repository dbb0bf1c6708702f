// The local sandbox's stat cache (copyback/delta): size, mode, inode, mtime, ctime and sha256 of
// each workspace file, kept in control/stat-cache.json (outside the exported workspace, where a
// bubblewrapped agent cannot write). Seeding records it; each delta export reads it so that only
// files whose stat changed are read and hashed, and writes back the scan's newer cache.
//
// The cache is an accelerator, never evidence: a missing or malformed file means "hash
// everything", and the host verifies every byte the delta carries (a cache that lies about a
// file the agent did not touch makes the delta disagree with its archive: provider_delta_mismatch,
// and finalization falls back to the full export).
import { randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { scanWorkspace } from "../../copyback/delta/scan";
import type { CachedFileStat, WorkspaceStatCache } from "../../copyback/delta/types";

export type StatCacheState = "used" | "absent" | "invalid";

/**
 * File timestamps come from the kernel's coarse clock (one tick behind real time at most: 10 ms
 * at HZ=100). Waiting this long after a quiet scan began puts every later write's ctime past
 * every recorded one.
 */
const CLOCK_TICK_MARGIN_MS = 50;

const SHA256 = /^[0-9a-f]{64}$/;

export async function readStatCache(file: string): Promise<{ cache: WorkspaceStatCache | undefined; state: StatCacheState }> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return { cache: undefined, state: "absent" };
  }
  try {
    const value = JSON.parse(text) as unknown;
    return isStatCache(value) ? { cache: value, state: "used" } : { cache: undefined, state: "invalid" };
  } catch {
    return { cache: undefined, state: "invalid" };
  }
}

/** Written aside and renamed into place: a crash leaves the old cache or the new one, never half. */
export async function writeStatCache(file: string, cache: WorkspaceStatCache): Promise<void> {
  const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, JSON.stringify(cache), { mode: 0o600, flag: "wx" });
    await rename(temporary, file);
  } finally {
    await rm(temporary, { force: true });
  }
}

export async function removeStatCache(file: string): Promise<void> {
  await rm(file, { force: true });
}

/**
 * The seed's record: every file of the freshly seeded workspace hashed once (nothing else writes
 * it now: seedWorkspace refuses while a process runs), cached without the racy window, then the
 * clock is let past one timestamp tick before the caller may start an agent.
 */
export async function recordSeedStatCache(workspace: string, file: string): Promise<void> {
  const started = Date.now();
  const scan = await scanWorkspace(workspace, { racyWindowMs: 0 });
  // An accelerator only: without it the first delta export hashes everything; the seed stands.
  await writeStatCache(file, scan.cache).catch(() => undefined);
  const wait = started + CLOCK_TICK_MARGIN_MS - Date.now();
  if (wait > 0) await sleep(wait);
}

function isStatCache(value: unknown): value is WorkspaceStatCache {
  if (typeof value !== "object" || value === null) return false;
  const { version, files } = value as { version?: unknown; files?: unknown };
  if (version !== 1 || typeof files !== "object" || files === null || Array.isArray(files)) return false;
  for (const record of Object.values(files as Record<string, unknown>)) if (!isRecord(record)) return false;
  return true;
}

function isRecord(value: unknown): value is CachedFileStat {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Record<string, unknown>;
  const finite = (x: unknown) => typeof x === "number" && Number.isFinite(x);
  return finite(r.size) && finite(r.mode) && finite(r.ino) && finite(r.mtimeMs) && finite(r.ctimeMs) && typeof r.sha256 === "string" && SHA256.test(r.sha256);
}
