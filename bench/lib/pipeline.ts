// The copyback pipelines the benchmark times, stage by stage, as the host runs them.
//   full:  export (the sandbox's tar of the whole workspace) -> validate -> extract into private
//          staging (extractValidatedArchive validates again first) -> merge under the lock
//   delta: sandbox scan with its stat cache -> tar of the changed entries -> manifest through
//          JSON (the transfer) -> host receive (whole-manifest tree check, validate, extract,
//          verify) -> merge with the complete snapshot manifest
// The archive is a transfer artifact: it is deleted as soon as it is extracted, before the
// merge's durability barrier, so that barrier does not flush bytes nobody keeps.
import { execFile } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import {
  exportWorkspaceArchive,
  extractValidatedArchive,
  mergeSnapshot,
  validateArchive,
  type DirectoryMergeLocks,
  type Manifest,
  type MergeOutcome,
} from "@copyback/core";
import {
  exportDeltaArchive,
  receiveDeltaArchive,
  type WorkspaceStatCache,
} from "@copyback/core/copyback/delta/index";
import { timed } from "./stats";

export const run = promisify(execFile);

export type Stages = Record<string, number>;

export interface PipelineInput {
  workspace: string;
  target: string;
  baseline: Manifest;
  /** Instance root (staging lives in <home>/staging). */
  home: string;
  locks: DirectoryMergeLocks;
  /** Where the archive file goes. */
  archive: string;
}

export interface PipelineResult {
  stages: Stages;
  total: number;
  outcome: MergeOutcome;
}

function total(stages: Stages): number {
  return Object.values(stages).reduce((s, x) => s + x, 0);
}

export async function fullPipeline(input: PipelineInput): Promise<PipelineResult> {
  const stages: Stages = {};
  const staging = await mkdtemp(path.join(input.home, "staging", "bench-"));
  try {
    stages.export = (
      await timed(() =>
        pipeline(exportWorkspaceArchive(input.workspace), createWriteStream(input.archive)),
      )
    ).ms;
    const val = await timed(() => validateArchive(input.archive));
    if (val.value.kind !== "safe")
      throw new Error(
        `the benchmark archive was rejected: ${JSON.stringify(val.value.violations.slice(0, 3))}`,
      );
    stages.validate = val.ms;
    stages.extract = (await timed(() => extractValidatedArchive(input.archive, staging))).ms;
    await rm(input.archive, { force: true });
    const mrg = await timed(() =>
      mergeSnapshot({
        target: input.target,
        baseline: input.baseline,
        snapshotDir: staging,
        locks: input.locks,
        consumeSnapshot: true,
      }),
    );
    stages.merge = mrg.ms;
    return { stages, total: total(stages), outcome: mrg.value };
  } finally {
    await rm(staging, { recursive: true, force: true });
    await rm(input.archive, { force: true });
  }
}

export interface DeltaResult extends PipelineResult {
  manifest: Manifest;
  cache: WorkspaceStatCache;
  hashedFiles: number;
  archiveEntries: number;
}

export async function deltaPipeline(
  input: PipelineInput & { cache?: WorkspaceStatCache },
): Promise<DeltaResult> {
  const stages: Stages = {};
  const staging = await mkdtemp(path.join(input.home, "staging", "bench-"));
  try {
    const scan = await timed(() =>
      exportDeltaArchive(
        input.workspace,
        input.baseline,
        input.cache ? { cache: input.cache } : {},
      ),
    );
    stages.scan = scan.ms;
    const exported = scan.value;
    let archive: string | null = null;
    if (exported.archive !== null) {
      const stream = exported.archive;
      stages.archive = (await timed(() => pipeline(stream, createWriteStream(input.archive)))).ms;
      archive = input.archive;
    }
    const sent = await timed(async () => JSON.parse(JSON.stringify(exported.manifest)) as unknown);
    stages.transfer = sent.ms;
    const received = await timed(() =>
      receiveDeltaArchive({
        archive,
        manifest: sent.value,
        baseline: input.baseline,
        stagingDir: staging,
      }),
    );
    stages.receive = received.ms;
    await rm(input.archive, { force: true });
    const mrg = await timed(() =>
      mergeSnapshot({
        target: input.target,
        baseline: input.baseline,
        snapshotDir: staging,
        snapshotManifest: received.value.snapshotManifest,
        locks: input.locks,
        consumeSnapshot: true,
      }),
    );
    stages.merge = mrg.ms;
    return {
      stages,
      total: total(stages),
      outcome: mrg.value,
      manifest: exported.manifest,
      cache: exported.cache,
      hashedFiles: exported.hashedFiles,
      archiveEntries: exported.changed.length,
    };
  } finally {
    await rm(staging, { recursive: true, force: true });
    await rm(input.archive, { force: true });
  }
}

/** `sync`: flushes everything dirty, so the next timed run starts from the same state. */
export async function settle(): Promise<void> {
  await run("sync");
}
