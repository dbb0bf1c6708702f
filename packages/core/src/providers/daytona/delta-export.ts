// Capability `exportDelta` for Daytona: the workspace scanned in the sandbox with the stat cache
// the seed recorded there (LAYOUT.statCache, outside the exported tree), only files whose stat
// moved hashed (sha256sum in the sandbox), the entries that differ from the host's baseline sent
// as a tar built in the sandbox (GNU tar, --no-recursion over exactly deltaArchivePaths), checked
// as every download is (transfer.ts), with the complete snapshot manifest. The newer cache is
// written back. Nothing here is trusted by the host: copyback/delta/receive.ts verifies it all.
// Bytes moved (issue 24): the listing comes gzipped and the cache goes gzipped where the sandbox
// has gzip; the cache is not downloaded when this controller holds a copy of exactly the bytes
// the sandbox states (stat-cache-memo.ts), nor uploaded when the sandbox already holds them.
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { gunzip as gunzipCb, gzip as gzipCb } from "node:zlib";
import type { Sandbox } from "@daytonaio/sdk";
import { deltaArchivePaths, diffManifests } from "../../copyback/delta/diff";
import { compileExclude } from "../../copyback/manifest/exclude";
import type { Manifest } from "../../copyback/manifest/types";
import { DomainError } from "../../errors";
import type { DeltaExport, DeltaExportRequest, LeaseHandle } from "../types";
import type { DaytonaClient } from "./client";
import { runScript } from "./commands";
import { daytonaStatCache, findPruneArgs, parseHashes, parseListing, planScan, type DaytonaStatCache, type ListedEntry } from "./delta-scan";
import { transferDropped } from "./errors";
import { streamListedEntries } from "./export";
import { LAYOUT, shellQuote } from "./layout";
import type { DaytonaSandboxes } from "./sandboxes";
import type { StatCacheMemo } from "./stat-cache-memo";
import { digestScript, downloadChecked, parseDigest, transferPath, type FileDigest } from "./transfer";

const gzip = promisify(gzipCb);
const gunzip = promisify(gunzipCb);

/** After the seed's scan: past one file-timestamp tick before an agent may write (stat-cache.ts of the local provider). */
const CLOCK_TICK_MARGIN_MS = 50;
/** A gzipped listing inflates to at most this (a sandbox's gzip bomb is a malformed listing, not memory). */
const LISTING_MAX_BYTES = 1024 * 2 ** 20;

/** A sandbox to talk to (the listing needs no more; salvage.ts uses it so). */
export interface Channel {
  client: DaytonaClient;
  sandbox: Sandbox;
  signal?: AbortSignal | undefined;
}

interface Io extends Channel {
  memo: StatCacheMemo;
}

const sha256Of = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

async function download(io: Channel, path: string, digest: FileDigest, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await downloadChecked(io.client, io.sandbox, path, digest, { what, timeoutSec: 600, signal: io.signal })) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function fetchFile(io: Channel, path: string, what: string): Promise<Buffer> {
  const probe = await runScript(io.client, io.sandbox, digestScript(path), { what: `${what} (digest)`, timeoutSec: 120, signal: io.signal });
  const digest = parseDigest(probe.output);
  if (!digest) throw transferDropped(`${what}: the sandbox stated no size and digest`);
  return download(io, path, digest, what);
}

type CacheRead = { cache: DaytonaStatCache | undefined; state: "used" | "absent" | "invalid"; sha256: string | null };

async function readCache(io: Io): Promise<CacheRead> {
  const file = shellQuote(LAYOUT.statCache);
  const probe = await runScript(io.client, io.sandbox, `[ -f ${file} ] && [ ! -L ${file} ] || exit 10\n${digestScript(LAYOUT.statCache)}`, { what: "looking for the stat cache", timeoutSec: 60, allow: [10], signal: io.signal });
  if (probe.exitCode === 10) return { cache: undefined, state: "absent", sha256: null };
  const digest = parseDigest(probe.output);
  // An accelerator only: unreadable means "hash everything".
  if (!digest) return { cache: undefined, state: "invalid", sha256: null };
  const copy = io.memo.get(io.sandbox.id, digest.sha256);
  if (copy) return { cache: copy, state: "used", sha256: digest.sha256 };
  try {
    const bytes = await download(io, LAYOUT.statCache, digest, "stat cache");
    const parsed = daytonaStatCache.safeParse(JSON.parse(bytes.toString("utf8")));
    if (!parsed.success) return { cache: undefined, state: "invalid", sha256: digest.sha256 };
    io.memo.set(io.sandbox.id, digest.sha256, parsed.data, bytes.length);
    return { cache: parsed.data, state: "used", sha256: digest.sha256 };
  } catch {
    return { cache: undefined, state: "invalid", sha256: null };
  }
}

/** Writes the cache unless the sandbox holds exactly its bytes already (`held`: the sha256 the sandbox stated). */
async function writeCache(io: Io, cache: DaytonaStatCache, held: string | null, canGzip: boolean): Promise<void> {
  const bytes = Buffer.from(JSON.stringify(cache));
  const sha256 = sha256Of(bytes);
  if (sha256 === held) return;
  const next = shellQuote(`${LAYOUT.statCache}.next`);
  io.memo.forget(io.sandbox.id);
  if (canGzip) {
    const packed = `${LAYOUT.statCache}.next.gz`;
    await io.client.call("writing the stat cache", async () => io.sandbox.fs.uploadFile(await gzip(bytes, { level: 1 }), packed), { sandboxId: io.sandbox.id });
    await runScript(io.client, io.sandbox, `gunzip -c ${shellQuote(packed)} > ${next} && rm -f ${shellQuote(packed)} && mv ${next} ${shellQuote(LAYOUT.statCache)}`, { what: "writing the stat cache", timeoutSec: 60 });
  } else {
    await io.client.call("writing the stat cache", () => io.sandbox.fs.uploadFile(bytes, `${LAYOUT.statCache}.next`), { sandboxId: io.sandbox.id });
    await runScript(io.client, io.sandbox, `mv ${next} ${shellQuote(LAYOUT.statCache)}`, { what: "writing the stat cache", timeoutSec: 60 });
  }
  // What the sandbox now holds, if the move happened; a copy that does not match is never used.
  io.memo.set(io.sandbox.id, sha256, cache, bytes.length);
}

/** Every entry of the workspace as find sees it (exclusions pruned), with the sandbox's clock when the listing began. */
export async function listWorkspace(io: Channel, exclude: readonly string[] | undefined): Promise<{ entries: ListedEntry[]; scanStartSec: number; canGzip: boolean }> {
  const listFile = transferPath("listing");
  const prune = findPruneArgs(exclude).map(shellQuote).join(" ");
  try {
    const listed = await runScript(
      io.client,
      io.sandbox,
      [
        "set -e",
        `mkdir -p ${shellQuote(LAYOUT.transfers)}`,
        "date +%s.%N",
        "base=$PWD",
        `cd ${shellQuote(LAYOUT.workspace)}`,
        `find . -mindepth 1 ${prune} -printf '%y\\0%m\\0%s\\0%i\\0%T@\\0%C@\\0%P\\0%l\\0' > "$base/${listFile}"`,
        // Compressed where the image has gzip (sequential, so a failing find is never hidden by a pipe).
        `if command -v gzip >/dev/null 2>&1 && command -v gunzip >/dev/null 2>&1; then gzip -1 -n "$base/${listFile}"; echo gzip=yes; fi`,
      ].join("\n"),
      { what: "listing the workspace", timeoutSec: 600, signal: io.signal },
    );
    const scanStartSec = Number(/^(\d+(?:\.\d+)?)\s/.exec(listed.output)?.[1] ?? NaN);
    if (!Number.isFinite(scanStartSec)) throw transferDropped("workspace listing: the sandbox stated no clock");
    const canGzip = /(?:^|\n)gzip=yes\s*$/.test(listed.output);
    const fetched = await fetchFile(io, canGzip ? `${listFile}.gz` : listFile, "workspace listing");
    return { entries: parseListing(canGzip ? await inflateListing(fetched) : fetched), scanStartSec, canGzip };
  } finally {
    await runScript(io.client, io.sandbox, `rm -f ${shellQuote(listFile)} ${shellQuote(`${listFile}.gz`)}`, { what: "removing the listing", timeoutSec: 60 }).catch(() => undefined);
  }
}

async function inflateListing(packed: Buffer): Promise<Buffer> {
  try {
    return await gunzip(packed, { maxOutputLength: LISTING_MAX_BYTES });
  } catch {
    // The bytes arrived as the sandbox stated them (checked): what it compressed is not a listing.
    throw new DomainError("conflict", "provider_delta_mismatch", "The sandbox's compressed listing of its workspace is malformed or too large.");
  }
}

/** The workspace's manifest, hashing only what the cache cannot vouch for. */
async function scanSandbox(io: Io, options: { exclude?: readonly string[] | undefined; cache: DaytonaStatCache | undefined; racyWindowSec?: number }) {
  const hashList = transferPath("hash-list");
  const hashOut = transferPath("hashes");
  const { entries, scanStartSec, canGzip } = await listWorkspace(io, options.exclude);
  const plan = planScan(entries, options.cache, scanStartSec, options.racyWindowSec);
  if (plan.toHash.length === 0) return { ...plan.finish([]), canGzip };
  try {
    const names = Buffer.from(`${plan.toHash.join("\0")}\0`);
    await io.client.call("uploading the files to hash", () => io.sandbox.fs.uploadFile(names, hashList), { sandboxId: io.sandbox.id });
    // 123: a file vanished between the listing and its hash (an agent still writing): no delta.
    const hashed = await runScript(io.client, io.sandbox, `base=$PWD\ncd ${shellQuote(LAYOUT.workspace)}\nxargs -0 -r sha256sum -- < "$base/${hashList}" > "$base/${hashOut}"`, {
      what: "hashing changed files",
      timeoutSec: 1800,
      allow: [123],
      signal: io.signal,
    });
    if (hashed.exitCode === 123) return { ...plan.finish([]), canGzip };
    return { ...plan.finish(parseHashes((await fetchFile(io, hashOut, "file hashes")).toString("utf8"))), canGzip };
  } finally {
    await runScript(io.client, io.sandbox, `rm -f ${[hashList, hashOut].map(shellQuote).join(" ")}`, { what: "removing scan files", timeoutSec: 60 }).catch(() => undefined);
  }
}

/** The seed's record: every file hashed once while no agent runs, then past a clock tick. */
export async function recordSeedStatCache(client: DaytonaClient, sandbox: Sandbox, memo: StatCacheMemo): Promise<void> {
  const io: Io = { client, sandbox, memo };
  const scan = await scanSandbox(io, { cache: undefined, racyWindowSec: 0 });
  await writeCache(io, scan.cache, null, scan.canGzip);
  await sleep(CLOCK_TICK_MARGIN_MS);
}

export async function exportDelta(sandboxes: DaytonaSandboxes, lease: LeaseHandle, request: DeltaExportRequest): Promise<DeltaExport> {
  const { client, sandbox } = await sandboxes.open(lease, request.signal);
  const io: Io = { client, sandbox, signal: request.signal, memo: sandboxes.statCaches };
  const excluded = compileExclude(request.exclude ? [...request.exclude] : undefined);
  const { cache, state, sha256 } = await readCache(io);
  const scan = await scanSandbox(io, { exclude: request.exclude, cache });
  // An accelerator only: a cache that cannot be written leaves the old one and never fails the export.
  await writeCache(io, scan.cache, sha256, scan.canGzip).catch(() => undefined);
  const baseline: Manifest = { version: 1, entries: request.baseline.entries.filter((e) => !excluded(e.path)) };
  const { changed, removed } = diffManifests(baseline, scan.manifest);
  const report = { changed: changed.length, removed: removed.length, hashedFiles: scan.hashedFiles, hashedBytes: scan.hashedBytes, statCache: state };
  const manifest = JSON.parse(JSON.stringify(scan.manifest)) as unknown;
  if (changed.length === 0) return { manifest, archive: null, report };
  const archive = await streamListedEntries(sandboxes, lease, io, "delta", deltaArchivePaths(changed), request.signal);
  return { manifest, archive, report };
}
