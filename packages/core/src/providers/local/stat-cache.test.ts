// The local sandbox's stat cache: what the seed records, how a malformed file is treated, and
// the local provider's delta export against the host's baseline (exclusions as the full export).
import { lstat, mkdir, mkdtemp, readdir, realpath, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { scanWorkspace } from "../../copyback/delta/scan";
import { exportWorkspaceArchive } from "../../copyback/archive/export";
import { takeManifest } from "../../copyback/manifest/take-manifest";
import { createLocalProvider } from "./local-provider";
import { sandboxLayout } from "./sandbox-layout";
import { passTimestampTick, readStatCache, recordSeedStatCache, removeStatCache, writeStatCache } from "./stat-cache";
import { StatCacheMemory } from "./stat-cache-memory";
import { decodeStatCache, encodeStatCache } from "./stat-cache-format";

const scratch = await mkdtemp(join(tmpdir(), "copyback-stat-cache-"));
afterAll(async () => rm(scratch, { recursive: true, force: true }));

describe("the local stat cache", () => {
  it("a missing file is absent, a malformed, truncated or older-format one invalid (hash everything), never an error", async () => {
    const file = join(scratch, "cache.bin");
    expect(await readStatCache(file)).toEqual({ cache: undefined, state: "absent" });
    await writeFile(file, "{not a cache");
    expect(await readStatCache(file)).toEqual({ cache: undefined, state: "invalid" });
    // The JSON file of the first format.
    await writeFile(file, JSON.stringify({ version: 1, files: { "a.txt": { size: 1, mode: 420, ino: 1, mtimeMs: 1, ctimeMs: 1, sha256: "a".repeat(64) } } }));
    expect((await readStatCache(file)).state).toBe("invalid");
    const good = {
      version: 1 as const,
      files: {
        "a.txt": { size: 1, mode: 420, ino: 1, mtimeMs: 1.5, ctimeMs: 1764547200123.4568, sha256: "a".repeat(64) },
        "dir/é b.txt": { size: 2 ** 40, mode: 0o755, ino: 2 ** 52 + 1, mtimeMs: 0, ctimeMs: 3, sha256: "0123456789abcdef".repeat(4) },
      },
    };
    await writeStatCache(file, good);
    expect(await readStatCache(file)).toEqual({ cache: good, state: "used" });
    const bytes = encodeStatCache(good);
    expect(decodeStatCache(bytes.subarray(0, bytes.length - 1))).toBeUndefined();
    expect(decodeStatCache(Buffer.concat([bytes, Buffer.from([0])]))).toBeUndefined();
    const otherVersion = Buffer.from(bytes);
    otherVersion.writeUInt32LE(3, 4);
    expect(decodeStatCache(otherVersion)).toBeUndefined();
    expect(decodeStatCache(encodeStatCache({ version: 1, files: {} }))).toEqual({ version: 1, files: {} });
  });

  it("the cache this process wrote is used again while the file is unchanged; a file rewritten by anyone else is read again", async () => {
    const file = join(scratch, "remembered.bin");
    const record = (sha: string) => ({ size: 1, mode: 420, ino: 7, mtimeMs: 1, ctimeMs: 1, sha256: sha.repeat(64) });
    const ours = { version: 1 as const, files: { "a.txt": record("a") } };
    await writeStatCache(file, ours);
    // The very object: nothing was read or decoded.
    expect((await readStatCache(file)).cache).toBe(ours);
    // Rewritten in place by another writer (another size): read again.
    const theirs = { version: 1 as const, files: { "a.txt": record("b"), "b.txt": record("c") } };
    await writeFile(file, encodeStatCache(theirs));
    const reread = await readStatCache(file);
    expect(reread).toEqual({ cache: theirs, state: "used" });
    // What was read is remembered in turn, until the file changes again.
    expect((await readStatCache(file)).cache).toBe(reread.cache);
    // Replaced by a rename with content of the same size (a new inode): read again.
    const same = { version: 1 as const, files: { "a.txt": record("d"), "b.txt": record("e") } };
    await writeFile(`${file}.other`, encodeStatCache(same));
    await rename(`${file}.other`, file);
    expect((await readStatCache(file)).cache).toEqual(same);
    // Made malformed, or removed: never the remembered records.
    await writeFile(file, "{not a cache");
    expect(await readStatCache(file)).toEqual({ cache: undefined, state: "invalid" });
    await writeStatCache(file, ours);
    await removeStatCache(file);
    expect(await readStatCache(file)).toEqual({ cache: undefined, state: "absent" });
  });

  it("the memory holds a few caches and a bounded number of records, the oldest dropped first", () => {
    const memory = new StatCacheMemory();
    const cache = (records: number) => ({
      version: 1 as const,
      files: Object.fromEntries(Array.from({ length: records }, (_, i) => [`f${i}`, { size: 1, mode: 420, ino: i, mtimeMs: 1, ctimeMs: 1, sha256: "a".repeat(64) }])),
    });
    const small = cache(2);
    for (const name of ["a", "b", "c", "d", "e"]) memory.set(name, "id", small);
    expect(memory.size).toBe(4);
    expect(memory.get("a", "id")).toBeUndefined();
    expect(memory.get("b", "id")).toBe(small);
    expect(memory.get("b", "other identity")).toBeUndefined();
    // Over the record bound alone: not kept at all; reaching it drops the oldest.
    memory.set("huge", "id", cache(50_001));
    expect(memory.get("huge", "id")).toBeUndefined();
    const big = cache(49_999);
    memory.set("big", "id", big);
    expect(memory.get("big", "id")).toBe(big);
    expect(memory.size).toBeLessThan(4);
    memory.forget("big");
    expect(memory.get("big", "id")).toBeUndefined();
  });

  it("keeps every record of a larger cache exactly, from a buffer at any offset", () => {
    const files: Record<string, { size: number; mode: number; ino: number; mtimeMs: number; ctimeMs: number; sha256: string }> = {};
    for (let i = 0; i < 300; i++) {
      files[`d${i % 7}/f-${i}.txt`] = { size: i * 1000, mode: 0o600 + (i % 64), ino: 1_000_000 + i, mtimeMs: 1_764_547_200_000 + i / 8, ctimeMs: 1_764_547_200_000 + i, sha256: i.toString(16).padStart(64, "0") };
    }
    const bytes = encodeStatCache({ version: 1, files });
    // Read from an odd offset, as a file read into a shared buffer may be.
    const shifted = Buffer.alloc(bytes.length + 3);
    bytes.copy(shifted, 3);
    expect(decodeStatCache(shifted.subarray(3))).toEqual({ version: 1, files });
  });

  it("refuses to write a record whose hash is not 64 hex digits (it would be stored as other bytes)", () => {
    const bad = { version: 1 as const, files: { "a.txt": { size: 1, mode: 420, ino: 1, mtimeMs: 1, ctimeMs: 1, sha256: "not a hash" } } };
    expect(() => encodeStatCache(bad)).toThrow();
  });

  it("the seed caches every file it just wrote, and a write right after it is hashed again", async () => {
    const workspace = join(scratch, "seeded");
    await mkdir(join(workspace, "d"), { recursive: true });
    await writeFile(join(workspace, "a.txt"), "a\n");
    await writeFile(join(workspace, "d/b.txt"), "b\n");
    const file = join(scratch, "seeded-cache.bin");
    await recordSeedStatCache(workspace, file);
    const { cache, state } = await readStatCache(file);
    expect(state).toBe("used");
    expect(Object.keys(cache?.files ?? {}).sort()).toEqual(["a.txt", "d/b.txt"]);
    // Same size, right after the seed returned: ctime moved past the record.
    await writeFile(join(workspace, "a.txt"), "A\n");
    const scan = await scanWorkspace(workspace, { ...(cache ? { cache } : {}) });
    expect(scan.hashedFiles).toBe(1);
    expect(scan.manifest.entries.find((e) => e.path === "a.txt")?.sha256).not.toBe(cache?.files["a.txt"]?.sha256);
  });

  it("the seed's wait ends only once a write made then gets a ctime past the newest record (a coarse tick simulated by a record 30 ms ahead), and leaves no probe behind", async () => {
    const workspace = join(scratch, "ticks");
    const control = join(scratch, "ticks-control");
    await mkdir(workspace, { recursive: true });
    await mkdir(control, { recursive: true });
    await writeFile(join(workspace, "a.txt"), "a\n");
    const newestCtimeMs = (await lstat(join(workspace, "a.txt"))).ctimeMs + 30;
    await passTimestampTick({ reference: join(workspace, "a.txt"), probeDir: control, newestCtimeMs, deadline: Date.now() + 5_000 });
    await writeFile(join(workspace, "a.txt"), "A\n");
    expect((await lstat(join(workspace, "a.txt"))).ctimeMs).toBeGreaterThan(newestCtimeMs);
    expect(await readdir(control)).toEqual([]);
    // No place for the probe: the full margin instead, never an error.
    await expect(passTimestampTick({ reference: join(workspace, "a.txt"), probeDir: join(scratch, "missing"), newestCtimeMs, deadline: Date.now() + 10 })).resolves.toBeUndefined();
  });
});

describe("the local provider's delta export", () => {
  it("sends only what differs from the baseline, leaves exclusions out as the full export does, and keeps working with a malformed cache", async () => {
    const instanceRoot = join(scratch, "instance");
    const host = join(scratch, "host");
    await mkdir(join(host, "node_modules"), { recursive: true });
    await writeFile(join(host, "keep.txt"), "keep\n");
    await writeFile(join(host, "edit.txt"), "before\n");
    await writeFile(join(host, "node_modules/dep.js"), "dep\n");
    const provider = createLocalProvider({ instanceRoot, isolation: "none" });
    const leaseId = `delta-${Date.now().toString(36)}`;
    const allocation = await provider.acquire!({ companyId: "c", environmentId: "e", leaseId, runId: "r", config: {} });
    const lease = { leaseId, pluginId: provider.pluginId, providerLeaseId: allocation.identity.providerLeaseId };
    const exclude = ["node_modules"];
    const baseline = await takeManifest(host, { exclude });
    await provider.seedWorkspace!(lease, Readable.from(exportWorkspaceArchive(host, { exclude }) as AsyncIterable<Buffer>));
    const layout = sandboxLayout(await realpath(instanceRoot), lease.providerLeaseId);
    await writeFile(join(layout.workspace, "edit.txt"), "after\n");
    await mkdir(join(layout.workspace, "node_modules"));
    await writeFile(join(layout.workspace, "node_modules/new.js"), "sandbox only\n");

    const first = await provider.exportDelta!(lease, { baseline, exclude });
    expect(first.report).toEqual({ changed: 1, removed: 0, hashedFiles: 1, hashedBytes: "after\n".length, statCache: "used" });
    const manifest = first.manifest as { entries: { path: string }[] };
    expect(manifest.entries.map((e) => e.path)).toEqual(["edit.txt", "keep.txt"]);
    expect(first.archive).not.toBeNull();
    first.archive?.destroy();

    await writeFile(layout.statCacheFile, "garbage");
    const second = await provider.exportDelta!(lease, { baseline, exclude });
    expect(second.report).toMatchObject({ changed: 1, hashedFiles: 2, statCache: "invalid" });
    second.archive?.destroy();
    // The malformed cache was replaced by the scan's.
    expect((await readStatCache(layout.statCacheFile)).state).toBe("used");
    await provider.destroy!(lease);
  });
});
