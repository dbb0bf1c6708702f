// The local sandbox's stat cache (copyback/delta): size, mode, inode, mtime, ctime and sha256 of
// each workspace file, kept in control/stat-cache.bin (outside the exported workspace, where a
// bubblewrapped agent cannot write; the format is stat-cache-format.ts's). Seeding records it; each delta export reads it so that only
// files whose stat changed are read and hashed, and writes back the scan's newer cache.
//
// The cache is an accelerator, never evidence: a missing or malformed file means "hash
// everything", and the host verifies every byte the delta carries (a cache that lies about a
// file the agent did not touch makes the delta disagree with its archive: provider_delta_mismatch,
// and finalization falls back to the full export).
import { randomBytes } from "node:crypto";
import { lstat, open, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { scanWorkspace } from "../../copyback/delta/scan";
import type { WorkspaceStatCache } from "../../copyback/delta/types";
import { decodeStatCache, encodeStatCache } from "./stat-cache-format";
import { identityKey, StatCacheMemory } from "./stat-cache-memory";

export type StatCacheState = "used" | "absent" | "invalid";

/**
 * File timestamps come from the kernel's coarse clock (one tick behind real time at most: 10 ms
 * at HZ=100). Waiting this long after a quiet scan began puts every later write's ctime past
 * every recorded one; the seed waits only until a probe write shows it has (passTimestampTick).
 */
const CLOCK_TICK_MARGIN_MS = 50;

/** What this process wrote or read lately (stat-cache-memory.ts): used only while the file is unchanged. */
const memory = new StatCacheMemory();

export async function readStatCache(file: string): Promise<{ cache: WorkspaceStatCache | undefined; state: StatCacheState }> {
  // The cache this process wrote or read, while the file still has that identity.
  const stats = await lstat(file).catch(() => null);
  const remembered = stats?.isFile() ? memory.get(file, identityKey(stats)) : undefined;
  if (remembered) return { cache: remembered, state: "used" };
  let bytes: Buffer;
  let identity: string;
  try {
    // The identity of the very file read (fstat of its handle), not of a name that may move on.
    const handle = await open(file, "r");
    try {
      identity = identityKey(await handle.stat());
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch {
    memory.forget(file);
    return { cache: undefined, state: "absent" };
  }
  const cache = decodeStatCache(bytes);
  if (!cache) {
    memory.forget(file);
    return { cache: undefined, state: "invalid" };
  }
  memory.set(file, identity, cache);
  return { cache, state: "used" };
}

/** Written aside and renamed into place: a crash leaves the old cache or the new one, never half. */
export async function writeStatCache(file: string, cache: WorkspaceStatCache): Promise<void> {
  const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  memory.forget(file);
  try {
    await writeFile(temporary, encodeStatCache(cache), { mode: 0o600, flag: "wx" });
    await rename(temporary, file);
    // Remembered with the identity the file has after the rename (a rename moves its ctime). Had
    // anyone replaced it in between, the records would still be true ones (this scan's): a cache
    // can only be stale, never wrong, for a file whose lstat matches a record.
    memory.set(file, identityKey(await lstat(file)), cache);
  } finally {
    await rm(temporary, { force: true });
  }
}

export async function removeStatCache(file: string): Promise<void> {
  memory.forget(file);
  await rm(file, { force: true });
}

/**
 * The seed's record: every file of the freshly seeded workspace hashed once (nothing else writes
 * it now: seedWorkspace refuses while a process runs), cached without the racy window, then the
 * clock is let past one timestamp tick before the caller may start an agent (passTimestampTick).
 */
export async function recordSeedStatCache(workspace: string, file: string): Promise<void> {
  const started = Date.now();
  const scan = await scanWorkspace(workspace, { racyWindowMs: 0 });
  // An accelerator only: without it the first delta export hashes everything; the seed stands.
  await writeStatCache(file, scan.cache).catch(() => undefined);
  const records = Object.entries(scan.cache.files);
  // Nothing recorded, nothing a later write could be mistaken for.
  if (records.length === 0) return;
  const newest = records.reduce((max, [, record]) => Math.max(max, record.ctimeMs), 0);
  // A recorded file names the workspace's filesystem (on overlayfs a file's device is its layer's, not the directory's).
  const reference = join(workspace, records[0]![0]);
  await passTimestampTick({ reference, probeDir: dirname(file), newestCtimeMs: newest, deadline: started + CLOCK_TICK_MARGIN_MS });
}

/**
 * Returns once a write made now gets a ctime past `newestCtimeMs` (the newest recorded), so every
 * later write does too (file timestamps never go back on one clock): a fresh probe file beside the
 * cache, on the filesystem of `reference` (a seeded file), is written and looked at until its ctime is past the
 * record. On a kernel ticking at 4 ms that is one tick, not the whole margin (the wake -> agent
 * window, bench/wake-latency.ts). Where the probe cannot tell (another filesystem, a probe that
 * fails), the full margin is waited as before; past the margin the wait ends as it always did.
 */
export async function passTimestampTick(opts: { reference: string; probeDir: string; newestCtimeMs: number; deadline: number }): Promise<void> {
  const device = (await lstat(opts.reference).catch(() => null))?.dev;
  for (;;) {
    const probe = join(opts.probeDir, `.tick-${randomBytes(6).toString("hex")}`);
    const stamped = await writeFile(probe, "", { mode: 0o600, flag: "wx" })
      .then(() => lstat(probe))
      .catch(() => null)
      .finally(() => rm(probe, { force: true }).catch(() => undefined));
    if (!stamped || stamped.dev !== device) break;
    if (stamped.ctimeMs > opts.newestCtimeMs) return;
    if (Date.now() >= opts.deadline) return;
    await sleep(1);
  }
  const wait = opts.deadline - Date.now();
  if (wait > 0) await sleep(wait);
}
