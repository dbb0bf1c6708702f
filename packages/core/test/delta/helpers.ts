// Plumbing of the delta tests: real directories, the delta archive written to a file as a
// provider would transfer it, and the manifest passed through JSON as it would travel.
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { DirectoryMergeLocks } from "../../src/copyback/locks/index";
import { mergeSnapshot, type MergeOutcome } from "../../src/copyback/merge/index";
import type { Manifest } from "../../src/copyback/manifest/index";
import {
  exportDeltaArchive,
  receiveDeltaArchive,
  type DeltaExport,
  type WorkspaceStatCache,
} from "../../src/copyback/delta/index";

const made: string[] = [];

export async function tempDir(label: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `copyback-delta-${label}-`));
  made.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

export async function saveArchive(exp: DeltaExport, file: string): Promise<string | null> {
  if (exp.archive === null) return null;
  await pipeline(exp.archive, createWriteStream(file));
  return file;
}

/** Sandbox export -> transfer (file + JSON) -> host receive -> merge: the whole delta copyback. */
export async function deltaCopyback(opts: {
  workspace: string;
  host: string;
  baseline: Manifest;
  work: string;
  cache?: WorkspaceStatCache;
  exclude?: string[];
}): Promise<{ outcome: MergeOutcome; exported: DeltaExport }> {
  const exported = await exportDeltaArchive(opts.workspace, opts.baseline, {
    ...(opts.cache ? { cache: opts.cache } : {}),
    ...(opts.exclude ? { exclude: opts.exclude } : {}),
  });
  const archive = await saveArchive(
    exported,
    path.join(opts.work, `delta-${made.length}-${Date.now()}.tar`),
  );
  const staging = await mkdtemp(path.join(opts.work, "staging-"));
  const home = path.join(opts.work, "home");
  await mkdir(home, { recursive: true, mode: 0o700 });
  const receipt = await receiveDeltaArchive({
    archive,
    manifest: JSON.parse(JSON.stringify(exported.manifest)),
    baseline: opts.baseline,
    stagingDir: staging,
    ...(opts.exclude ? { exclude: opts.exclude } : {}),
  });
  const outcome = await mergeSnapshot({
    target: opts.host,
    baseline: opts.baseline,
    snapshotDir: staging,
    snapshotManifest: receipt.snapshotManifest,
    locks: new DirectoryMergeLocks({ instanceRoot: home }),
    consumeSnapshot: true,
    ...(opts.exclude ? { exclude: opts.exclude } : {}),
  });
  return { outcome, exported };
}
