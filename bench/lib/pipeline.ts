// The copyback pipelines the benchmark times, stage by stage, as the host runs them.
//   full:  the sandbox's export stream (exportWorkspaceArchive) straight into
//          receiveWorkspaceArchive (validates while the bytes arrive, keeps them in memory,
//          extracts into private staging only once all of it is validated, hashing each file
//          as it is written) -> mergeSnapshot with the manifest receive returned, consuming
//          staging. Stages: "export+validate" = the export streamed in and validated as it
//          arrives, "extract" = the writes once all of it was validated, "merge".
//   delta: sandbox scan with its stat cache -> tar of the changed entries -> manifest through
//          JSON (the transfer) -> host receive (whole-manifest tree check, validate, extract,
//          verify) -> merge with the complete snapshot manifest
// Both start from the stored baseline as finalization reads it: the JSON value from the
// database through parseManifest ("baseline" stage; the driver's JSON decoding is not timed).
// That parse is the only one of the baseline: receive and merge get its frozen result, which
// parseManifest returns as is.
// The delta archive is a transfer artifact: it is deleted as soon as it is extracted, before the
// merge's durability barrier, so that barrier does not flush bytes nobody keeps. The full
// archive never touches the disk (it is spooled in memory up to 256 MiB).
import { execFile } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import {
  exportDeltaArchive,
  exportWorkspaceArchive,
  mergeSnapshot,
  parseManifest,
  receiveDeltaArchive,
  receiveWorkspaceArchive,
  type DirectoryMergeLocks,
  type Manifest,
  type MergeOutcome,
  type WorkspaceStatCache,
} from "@copyback/core";
import { timed } from "./stats";

export const run = promisify(execFile);

export type Stages = Record<string, number>;

export interface PipelineInput {
  workspace: string;
  target: string;
  /** The baseline: the sandbox keeps this one; the host reads its stored JSON copy. */
  baseline: Manifest;
  /** Instance root (staging lives in <home>/staging). */
  home: string;
  locks: DirectoryMergeLocks;
  /** Where the delta archive file goes (the full pipeline keeps its archive in memory). */
  archive: string;
}

export interface PipelineResult {
  /** Wall time of each stage. */
  stages: Stages;
  total: number;
  /** CPU time of the benchmark process over all stages (children such as `sync -f` excluded). */
  cpu: number;
  outcome: MergeOutcome;
}

/** Times named stages into one result. */
class StageClock {
  readonly stages: Stages = {};
  cpu = 0;

  async stage<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t = await timed(fn);
    this.stages[name] = t.ms;
    this.cpu += t.cpuMs;
    return t.value;
  }

  result(outcome: MergeOutcome): PipelineResult {
    const total = Object.values(this.stages).reduce((s, x) => s + x, 0);
    return { stages: this.stages, total, cpu: this.cpu, outcome };
  }
}

/** The host's stored copy of the baseline, as the database driver hands it over. */
function storedBaseline(baseline: Manifest): unknown {
  return JSON.parse(JSON.stringify(baseline)) as unknown;
}

export async function fullPipeline(input: PipelineInput): Promise<PipelineResult> {
  const clock = new StageClock();
  const stored = storedBaseline(input.baseline);
  const staging = await mkdtemp(path.join(input.home, "staging", "bench-"));
  try {
    const received = await clock.stage("export+receive+extract", () =>
      receiveWorkspaceArchive({
        // As the local provider streams it: straight in and nowhere else, so the export's
        // buffers are reused by the next export once this receive is done.
        archive: exportWorkspaceArchive(input.workspace, { recycleBuffers: true }),
        stagingDir: staging,
      }),
    );
    if (received.kind !== "safe") {
      throw new Error(
        `the benchmark archive was rejected: ${JSON.stringify(received.violations.slice(0, 3))}`,
      );
    }
    // Split the one stage into its two phases, as receive measured them.
    const total = clock.stages["export+receive+extract"] as number;
    delete clock.stages["export+receive+extract"];
    clock.stages["export+validate"] = total - received.phases.extractMs;
    clock.stages.extract = received.phases.extractMs;
    const baseline = await clock.stage("baseline", async () => parseManifest(stored));
    const outcome = await clock.stage("merge", () =>
      mergeSnapshot({
        target: input.target,
        baseline,
        snapshotDir: staging,
        snapshotManifest: received.snapshotManifest,
        locks: input.locks,
        consumeSnapshot: true,
      }),
    );
    return clock.result(outcome);
  } finally {
    await rm(staging, { recursive: true, force: true });
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
  const clock = new StageClock();
  const stored = storedBaseline(input.baseline);
  const staging = await mkdtemp(path.join(input.home, "staging", "bench-"));
  try {
    const exported = await clock.stage("scan", () =>
      exportDeltaArchive(
        input.workspace,
        input.baseline,
        input.cache ? { cache: input.cache } : {},
      ),
    );
    let archive: string | null = null;
    const stream = exported.archive;
    if (stream !== null) {
      await clock.stage("archive", () => pipeline(stream, createWriteStream(input.archive)));
      archive = input.archive;
    }
    const sent = await clock.stage(
      "transfer",
      async () => JSON.parse(JSON.stringify(exported.manifest)) as unknown,
    );
    const baseline = await clock.stage("baseline", async () => parseManifest(stored));
    const received = await clock.stage("receive", () =>
      receiveDeltaArchive({
        archive,
        manifest: sent,
        baseline,
        stagingDir: staging,
      }),
    );
    await rm(input.archive, { force: true });
    const outcome = await clock.stage("merge", () =>
      mergeSnapshot({
        target: input.target,
        baseline,
        snapshotDir: staging,
        snapshotManifest: received.snapshotManifest,
        locks: input.locks,
        consumeSnapshot: true,
      }),
    );
    return {
      ...clock.result(outcome),
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

/**
 * The plain-tools baseline: `tar -C src -cf - . | tar -C dst -xf - && sync`, with the CPU time
 * of its processes (bash's `times`: user and system time of the finished children).
 */
export async function tarPipeline(src: string, dst: string): Promise<{ ms: number; cpu: number }> {
  return timedShell('tar -C "$1" -cf - . | tar -C "$2" -xf - && sync', [src, dst]);
}

/**
 * The serialized floor of a validate-then-extract copyback with tar itself (issue 24):
 * `tar -C src -cf SPOOL . && tar -C dst -xf SPOOL && sync`. The whole archive is written before
 * any of it is extracted, as the copyback validates all of it before it extracts; SPOOL is in
 * memory (/dev/shm) where it fits, on the tree's filesystem otherwise (--large). The spool is
 * removed after the clock stops. CPU time is tar's two processes' own (bash's `times`).
 */
export async function serializedFloor(
  src: string,
  dst: string,
  spool: string,
): Promise<{ ms: number; cpu: number }> {
  try {
    return await timedShell('tar -C "$1" -cf "$3" . && tar -C "$2" -xf "$3" && sync', [
      src,
      dst,
      spool,
    ]);
  } finally {
    await rm(spool, { force: true });
  }
}

/**
 * What a user would run instead of a small copyback: `rsync -a --delete SANDBOX/ HOST/ && sync`
 * (rsync's quick check: a stat walk of both trees, then only the files whose size or mtime differ).
 */
export async function rsyncReference(
  sandbox: string,
  host: string,
): Promise<{ ms: number; cpu: number }> {
  return timedShell('rsync -a --delete "$1/" "$2/" && sync', [sandbox, host]);
}

/** Wall time of `script` under bash, and the CPU time of the children it ran (bash's `times`). */
async function timedShell(script: string, args: string[]): Promise<{ ms: number; cpu: number }> {
  // `|| exit 1`: a failed reference fails the benchmark instead of timing a partial copy.
  const t = await timed(() =>
    run("bash", ["-c", `set -o pipefail; ${script} || exit 1; times`, "bash", ...args]),
  );
  const lines = t.value.stdout.trim().split("\n");
  const children = (lines[lines.length - 1] ?? "").trim().split(/\s+/).map(seconds);
  return { ms: t.ms, cpu: children.reduce((s, x) => s + x, 0) * 1000 };
}

function seconds(text: string): number {
  const m = /^(\d+)m([\d.]+)s$/.exec(text);
  return m ? Number(m[1]) * 60 + Number(m[2]) : 0;
}

/** `sync`: flushes everything dirty, so the next timed run starts from the same state. */
export async function settle(): Promise<void> {
  await run("sync");
}
