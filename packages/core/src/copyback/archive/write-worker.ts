// The thread that writes a run of extracted files (write-spooled.ts): for each file, create it
// O_CREAT|O_EXCL|O_NOFOLLOW 0600 (never clobbers, never follows a link), copy its bytes from the
// shared spool, hash them (sha256) on the way, set its mode and mtime, close. Paths arrive
// already joined from validated plain components; the thread decides nothing.
//
// The program is plain JavaScript using Node built-ins only, started with `eval`: it runs the
// same under tsx, a test runner or a bundle, with no loader and no file to resolve.
import { Worker } from "node:worker_threads";
import type { SpoolSource } from "./spool";

/** One regular file to write (structured-clone safe). */
export interface FileJob {
  /** Absolute path: the destination joined with validated plain components. */
  path: string;
  /** Where its bytes start in the spool. */
  offset: number;
  size: number;
  mode: number;
  mtimeMs: number;
}

const WRITER_PROGRAM = `
"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { createHash } = require("node:crypto");
const { source } = workerData;
const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;
const scratch = new Uint8Array(1024 * 1024);

// Consecutive pieces of the spool's bytes [offset, offset + length).
let segment = 0;
function forEachPiece(offset, length, fn) {
  const end = offset + length;
  if (end > source.length) throw new RangeError("read past the end of the spool");
  for (let at = offset; at < end; ) {
    let piece;
    if (source.kind === "file") {
      const got = fs.readSync(source.fd, scratch, 0, Math.min(scratch.length, end - at), at);
      if (got === 0) throw new RangeError("the spool file is shorter than what was written");
      piece = scratch.subarray(0, got);
    } else {
      // Jobs come in archive order: move forward from the last segment (back only if needed).
      const segments = source.segments;
      while (segment > 0 && segments[segment].start > at) segment--;
      while (segments[segment].start + segments[segment].length <= at) segment++;
      const s = segments[segment];
      const within = at - s.start;
      piece = new Uint8Array(s.buffer, s.byteOffset + within, Math.min(s.length - within, end - at));
    }
    fn(piece);
    at += piece.length;
  }
}

// Jobs arrive in batches (startWriter keeps at most two in flight), so a thread holds a few
// hundred paths at a time, not its whole share of a 200,000-file archive.
parentPort.on("message", (message) => {
  if (message.jobs === undefined) {
    parentPort.close();
    return;
  }
  try {
    const hashes = [];
    for (const job of message.jobs) {
      const fd = fs.openSync(job.path, flags, 0o600);
      try {
        const hash = createHash("sha256");
        forEachPiece(job.offset, job.size, (piece) => {
          for (let at = 0; at < piece.length; ) at += fs.writeSync(fd, piece, at, piece.length - at);
          hash.update(piece);
        });
        fs.fchmodSync(fd, job.mode);
        const mtime = new Date(job.mtimeMs);
        fs.futimesSync(fd, mtime, mtime);
        hashes.push(hash.digest("hex"));
      } finally {
        fs.closeSync(fd);
      }
    }
    parentPort.postMessage({ hashes });
  } catch (error) {
    parentPort.postMessage({ error: { message: String(error && error.message), code: error && error.code } });
    parentPort.close();
  }
});
`;

export interface WriterThread {
  /** The sha256 of each job's file, in job order. Rejects with the errno code of a failure. */
  done: Promise<string[]>;
  /** Stops the thread (after a failure elsewhere) and waits until it no longer writes. */
  stop(): Promise<void>;
}

/** Files per message to a writer thread, and how many such batches it may have queued. */
export const WRITER_BATCH_FILES = 256;
const WRITER_BATCHES_IN_FLIGHT = 2;

/** A thread writing `files` in order; `toJob` makes each one's job when its batch is sent. */
export function startWriter<T>(source: SpoolSource, files: readonly T[], toJob: (file: T) => FileJob): WriterThread {
  const jobs = files;
  // No loader flags (tsx, test runners) in the thread: it needs none and starts faster.
  const worker = new Worker(WRITER_PROGRAM, {
    eval: true,
    execArgv: [],
    workerData: { source },
  });
  let settled = false;
  const hashes: string[] = [];
  let sent = 0;
  const sendNext = () => {
    if (sent >= jobs.length) return;
    const batch = jobs.slice(sent, sent + WRITER_BATCH_FILES).map(toJob);
    sent += batch.length;
    worker.postMessage({ jobs: batch });
  };
  const done = new Promise<string[]>((resolve, reject) => {
    const fail = (error: Error) => {
      settled = true;
      reject(error);
    };
    worker.on("message", (message: { hashes?: string[]; error?: { message: string; code?: string } }) => {
      if (settled) return;
      if (!message.hashes) {
        const failure = new Error(message.error?.message ?? "a writer thread failed");
        return fail(Object.assign(failure, { code: message.error?.code }));
      }
      hashes.push(...message.hashes);
      if (hashes.length > sent) return fail(new Error("a writer thread answered for files it was not given"));
      if (hashes.length === jobs.length) {
        settled = true;
        worker.postMessage({ end: true });
        return resolve(hashes);
      }
      sendNext();
    });
    worker.once("error", fail);
    worker.once("exit", (code) => {
      if (!settled) fail(new Error(`a writer thread exited early (${code})`));
    });
  });
  done.catch(() => undefined);
  for (let i = 0; i < WRITER_BATCHES_IN_FLIGHT; i++) sendNext();
  if (jobs.length === 0) {
    settled = true;
    worker.postMessage({ end: true });
  }
  return {
    done: jobs.length === 0 ? Promise.resolve([]) : done,
    async stop() {
      await worker.terminate();
    },
  };
}
