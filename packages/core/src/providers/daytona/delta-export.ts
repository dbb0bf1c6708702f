// Capability `exportDelta` for Daytona: the workspace scanned in the sandbox with the stat cache
// the seed recorded there (LAYOUT.statCache, outside the exported tree), only files whose stat
// moved hashed (sha256sum in the sandbox), the entries that differ from the host's baseline sent
// as a tar built in the sandbox (GNU tar, --no-recursion over exactly deltaArchivePaths), checked
// as every download is (transfer.ts), with the complete snapshot manifest. The newer cache is
// written back. Nothing here is trusted by the host: copyback/delta/receive.ts verifies it all.
import { setTimeout as sleep } from "node:timers/promises";
import type { Sandbox } from "@daytonaio/sdk";
import { deltaArchivePaths, diffManifests } from "../../copyback/delta/diff";
import { compileExclude } from "../../copyback/manifest/exclude";
import type { Manifest } from "../../copyback/manifest/types";
import type { DeltaExport, DeltaExportRequest, LeaseHandle } from "../types";
import type { DaytonaClient } from "./client";
import { runScript } from "./commands";
import { daytonaStatCache, findPruneArgs, parseHashes, parseListing, planScan, type DaytonaStatCache, type ListedEntry } from "./delta-scan";
import { transferDropped } from "./errors";
import { streamListedEntries } from "./export";
import { LAYOUT, shellQuote } from "./layout";
import type { DaytonaSandboxes } from "./sandboxes";
import { digestScript, downloadChecked, parseDigest, transferPath } from "./transfer";

/** After the seed's scan: past one file-timestamp tick before an agent may write (stat-cache.ts of the local provider). */
const CLOCK_TICK_MARGIN_MS = 50;

export interface Io {
  client: DaytonaClient;
  sandbox: Sandbox;
  signal?: AbortSignal | undefined;
}

async function fetchFile(io: Io, path: string, what: string): Promise<Buffer> {
  const probe = await runScript(io.client, io.sandbox, digestScript(path), { what: `${what} (digest)`, timeoutSec: 120, signal: io.signal });
  const digest = parseDigest(probe.output);
  if (!digest) throw transferDropped(`${what}: the sandbox stated no size and digest`);
  const chunks: Buffer[] = [];
  for await (const chunk of await downloadChecked(io.client, io.sandbox, path, digest, { what, timeoutSec: 600, signal: io.signal })) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function readCache(io: Io): Promise<{ cache: DaytonaStatCache | undefined; state: "used" | "absent" | "invalid" }> {
  const file = shellQuote(LAYOUT.statCache);
  const exists = await runScript(io.client, io.sandbox, `[ -f ${file} ] && [ ! -L ${file} ] || exit 10`, { what: "looking for the stat cache", timeoutSec: 60, allow: [10], signal: io.signal });
  if (exists.exitCode === 10) return { cache: undefined, state: "absent" };
  try {
    const parsed = daytonaStatCache.safeParse(JSON.parse((await fetchFile(io, LAYOUT.statCache, "stat cache")).toString("utf8")));
    return parsed.success ? { cache: parsed.data, state: "used" } : { cache: undefined, state: "invalid" };
  } catch {
    // An accelerator only: unreadable means "hash everything".
    return { cache: undefined, state: "invalid" };
  }
}

async function writeCache(io: Io, cache: DaytonaStatCache): Promise<void> {
  const next = `${LAYOUT.statCache}.next`;
  await io.client.call("writing the stat cache", () => io.sandbox.fs.uploadFile(Buffer.from(JSON.stringify(cache)), next), { sandboxId: io.sandbox.id });
  await runScript(io.client, io.sandbox, `mv ${shellQuote(next)} ${shellQuote(LAYOUT.statCache)}`, { what: "writing the stat cache", timeoutSec: 60 });
}

/** Every entry of the workspace as find sees it (exclusions pruned), with the sandbox's clock when the listing began. */
export async function listWorkspace(io: Io, exclude: readonly string[] | undefined): Promise<{ entries: ListedEntry[]; scanStartSec: number }> {
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
      ].join("\n"),
      { what: "listing the workspace", timeoutSec: 600, signal: io.signal },
    );
    const scanStartSec = Number(/^(\d+(?:\.\d+)?)\s/.exec(listed.output)?.[1] ?? NaN);
    if (!Number.isFinite(scanStartSec)) throw transferDropped("workspace listing: the sandbox stated no clock");
    return { entries: parseListing(await fetchFile(io, listFile, "workspace listing")), scanStartSec };
  } finally {
    await runScript(io.client, io.sandbox, `rm -f ${shellQuote(listFile)}`, { what: "removing the listing", timeoutSec: 60 }).catch(() => undefined);
  }
}

/** The workspace's manifest, hashing only what the cache cannot vouch for. */
async function scanSandbox(io: Io, options: { exclude?: readonly string[] | undefined; cache: DaytonaStatCache | undefined; racyWindowSec?: number }) {
  const hashList = transferPath("hash-list");
  const hashOut = transferPath("hashes");
  const { entries, scanStartSec } = await listWorkspace(io, options.exclude);
  const plan = planScan(entries, options.cache, scanStartSec, options.racyWindowSec);
  if (plan.toHash.length === 0) return plan.finish([]);
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
    if (hashed.exitCode === 123) return plan.finish([]);
    return plan.finish(parseHashes((await fetchFile(io, hashOut, "file hashes")).toString("utf8")));
  } finally {
    await runScript(io.client, io.sandbox, `rm -f ${[hashList, hashOut].map(shellQuote).join(" ")}`, { what: "removing scan files", timeoutSec: 60 }).catch(() => undefined);
  }
}

/** The seed's record: every file hashed once while no agent runs, then past a clock tick. */
export async function recordSeedStatCache(client: DaytonaClient, sandbox: Sandbox): Promise<void> {
  const io: Io = { client, sandbox };
  const scan = await scanSandbox(io, { cache: undefined, racyWindowSec: 0 });
  await writeCache(io, scan.cache);
  await sleep(CLOCK_TICK_MARGIN_MS);
}

export async function exportDelta(sandboxes: DaytonaSandboxes, lease: LeaseHandle, request: DeltaExportRequest): Promise<DeltaExport> {
  const { client, sandbox } = await sandboxes.open(lease, request.signal);
  const io: Io = { client, sandbox, signal: request.signal };
  const excluded = compileExclude(request.exclude ? [...request.exclude] : undefined);
  const { cache, state } = await readCache(io);
  const scan = await scanSandbox(io, { exclude: request.exclude, cache });
  // An accelerator only: a cache that cannot be written leaves the old one and never fails the export.
  await writeCache(io, scan.cache).catch(() => undefined);
  const baseline: Manifest = { version: 1, entries: request.baseline.entries.filter((e) => !excluded(e.path)) };
  const { changed, removed } = diffManifests(baseline, scan.manifest);
  const report = { changed: changed.length, removed: removed.length, hashedFiles: scan.hashedFiles, hashedBytes: scan.hashedBytes, statCache: state };
  const manifest = JSON.parse(JSON.stringify(scan.manifest)) as unknown;
  if (changed.length === 0) return { manifest, archive: null, report };
  const archive = await streamListedEntries(sandboxes, lease, io, "delta", deltaArchivePaths(changed), request.signal);
  return { manifest, archive, report };
}
