// Writes the entries of a validated, spooled archive into an empty destination and returns the
// manifest of what it wrote (R-UA-2, R-UA-4). No second tar parse: the validator recorded where
// each entry's body starts, and the spool holds exactly the bytes it validated. The write
// primitives are the strictest the OS has, as in write-entries.ts: files O_CREAT|O_EXCL|
// O_NOFOLLOW (never clobber, never follow), directories created once each by us, nothing but
// validated plain components joined under the destination, symlinks last (the caller).
//
// Each file's bytes are hashed as they are written (sha256), so the snapshot manifest costs no
// second read of the tree.
//
// Speed: the directories are made first, here; the files are then written by worker threads,
// each taking one contiguous run of the archive's files (so mostly its own directories), reading
// the shared spool in place. File creation and hashing dominate a full copyback and `tar | tar`
// runs its two halves on two CPUs; on a busy machine, each thread is also one more share of
// the CPU. The calling thread's event loop stays free meanwhile.
import * as fs from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { comparePaths } from "../manifest/paths";
import type { Manifest, ManifestEntry } from "../manifest/types";
import { ArchiveExtractionError } from "./errors";
import type { ArchiveSpool } from "./spool";
import { entryComponents, type ValidatedEntry } from "./validate";
import { PERMISSIONS } from "./write-entries";
import { startWriter, type FileJob } from "./write-worker";

export interface WriteOptions {
  /** Threads writing files (default: the CPUs available, at most 4). */
  writers?: number;
}

/** Below this much work one thread is enough (starting one costs a few milliseconds). */
const ONE_WRITER_MAX_FILES = 256;
const ONE_WRITER_MAX_BYTES = 32 * 1024 * 1024;
/** A file's creation costs about as much as writing this many bytes (for splitting the work). */
const FILE_COST_BYTES = 32 * 1024;
const MAX_WRITERS = 4;

/** A single plain name: what validation produced; anything else means a bug or tampering. */
function isPlainName(part: string): boolean {
  return (
    part !== "" && part !== "." && part !== ".." && !part.includes("/") && !part.includes("\0")
  );
}

/**
 * Writes directories and files (symlinks and final directory modes are the caller's next
 * steps) and returns the manifest the whole extraction will have produced once those are done.
 */
export async function writeSpooledEntries(
  spool: ArchiveSpool,
  dest: string,
  entries: readonly ValidatedEntry[],
  opts: WriteOptions = {},
): Promise<Manifest> {
  const manifest: ManifestEntry[] = [];
  /** Directory -> the mode its entry gives; undefined when it has no entry or no mode. */
  const directoryModes = new Map<string, number | undefined>();
  const ensureDirectory = (components: readonly string[]) => {
    let key = "";
    for (const part of components) {
      key = key === "" ? part : `${key}/${part}`;
      if (directoryModes.has(key)) continue;
      // mkdir fails on anything already there: in a destination that was empty, only an
      // intruder could have put it there.
      fs.mkdirSync(join(dest, key), 0o777);
      directoryModes.set(key, undefined);
    }
  };
  // The files to write, as the validator recorded them: each one's job (its absolute path) is
  // made only when its batch goes to a writer thread (write-worker.ts), so 200,000 files do not
  // cost 200,000 jobs held at once.
  const files: ValidatedEntry[] = [];
  for (const want of entries) {
    if (want.kind === "root") continue;
    const components = entryComponents(want);
    if (!components.every(isPlainName)) {
      throw new ArchiveExtractionError("an entry path is not made of plain names");
    }
    if (want.kind === "directory") {
      ensureDirectory(components);
      // Its exact mode is applied last (applyDirectoryModes); the manifest already says it.
      if (want.mode !== undefined) directoryModes.set(want.key, want.mode & PERMISSIONS);
    } else if (want.kind === "symlink") {
      manifest.push({ path: want.key, type: "symlink", mode: 0o777, target: want.linkpath as string });
    } else {
      ensureDirectory(components.slice(0, -1));
      files.push(want);
    }
  }
  // Directories without an entry of their own (or without a mode in it) keep the default
  // 0777 less the umask, like tar: the manifest records what the disk says.
  for (const [key, mode] of directoryModes) {
    const actual = mode ?? fs.lstatSync(join(dest, key)).mode & PERMISSIONS;
    manifest.push({ path: key, type: "directory", mode: actual });
  }

  const hashes = await writeFiles(spool, files, (want) => fileJob(dest, want), opts.writers ?? defaultWriters());
  files.forEach((want, i) => {
    manifest.push({
      path: want.key,
      type: "file",
      mode: fileMode(want),
      sha256: hashes[i] as string,
      size: want.size,
    });
  });
  manifest.sort((a, b) => comparePaths(a.path, b.path));
  return { version: 1, entries: manifest };
}

/** Created 0600 while being written; then its own mode (0644 when the header had none). */
function fileMode(want: ValidatedEntry): number {
  return (want.mode ?? 0o644) & PERMISSIONS;
}

function fileJob(dest: string, want: ValidatedEntry): FileJob {
  return {
    path: join(dest, ...entryComponents(want)),
    offset: want.offset,
    size: want.size,
    mode: fileMode(want),
    mtimeMs: want.mtimeMs ?? Date.now(),
  };
}

function defaultWriters(): number {
  return Math.max(1, Math.min(MAX_WRITERS, availableParallelism()));
}

async function writeFiles(
  spool: ArchiveSpool,
  files: readonly ValidatedEntry[],
  toJob: (file: ValidatedEntry) => FileJob,
  writers: number,
): Promise<string[]> {
  if (files.length === 0) return [];
  const bytes = files.reduce((sum, file) => sum + file.size, 0);
  const small = files.length <= ONE_WRITER_MAX_FILES && bytes <= ONE_WRITER_MAX_BYTES;
  const runs = splitRuns(files, small ? 1 : Math.max(1, Math.floor(writers)));
  const source = spool.source();
  const threads = runs.map((run) => startWriter(source, run, toJob));
  try {
    const results = await Promise.all(threads.map((t) => t.done));
    return results.flat();
  } catch (error) {
    // Nothing may still be writing when the caller empties the destination.
    await Promise.all(threads.map((t) => t.stop()));
    throw error;
  }
}

/** Contiguous runs of about equal cost (bytes plus a per-file creation cost). */
export function splitRuns<T extends { size: number }>(jobs: readonly T[], count: number): T[][] {
  const cost = (job: T) => job.size + FILE_COST_BYTES;
  const total = jobs.reduce((sum, job) => sum + cost(job), 0);
  const runs: T[][] = [[]];
  let spent = 0;
  for (const job of jobs) {
    const current = runs[runs.length - 1] as T[];
    if (current.length > 0 && runs.length < count && spent >= (total * runs.length) / count) {
      runs.push([job]);
    } else {
      current.push(job);
    }
    spent += cost(job);
  }
  return runs.filter((run) => run.length > 0);
}
