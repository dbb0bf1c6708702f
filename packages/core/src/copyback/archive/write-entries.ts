// Writes the entries of a validated archive into an empty destination, reading them with
// node-tar's Parser (the same parser validation cross-checked) but creating files with the
// strictest primitives the OS has: O_CREAT|O_EXCL|O_NOFOLLOW (never clobbers, never follows),
// directories created once each by us, nothing but validated paths joined under the
// destination. Every entry is checked against the validated list (same order, path, type,
// size, target) before anything is written for it. (R-UA-2, R-UA-4)
import {
  closeSync,
  constants,
  fchmodSync,
  futimesSync,
  mkdirSync,
  openSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { Parser, type ReadEntry } from "tar";
import type { FileHandle } from "node:fs/promises";
import { readArchiveBytes } from "./archive-bytes";
import { ArchiveExtractionError } from "./errors";
import { MAX_EXTENSION_HEADER_BYTES, type ArchiveLimits } from "./limits";
import { entryComponents, type ValidatedEntry } from "./validate";

const CREATE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
/** Permission bits only: setuid, setgid and sticky never survive extraction. */
export const PERMISSIONS = 0o777;

/** A single plain name: what validation produced; anything else means a bug or tampering. */
function isPlainName(part: string): boolean {
  return (
    part !== "" && part !== "." && part !== ".." && !part.includes("/") && !part.includes("\0")
  );
}

function changed(): ArchiveExtractionError {
  return new ArchiveExtractionError("the archive changed after it was validated");
}

export async function writeValidatedEntries(
  handle: FileHandle,
  limits: ArchiveLimits,
  dest: string,
  expected: readonly ValidatedEntry[],
): Promise<void> {
  const made = new Set<string>();
  const ensureDirectory = (components: readonly string[]) => {
    let key = "";
    for (const part of components) {
      key = key === "" ? part : `${key}/${part}`;
      if (made.has(key)) continue;
      // mkdir fails on anything already there: in a destination that was empty, only an
      // intruder could have put it there. Listed directories get their exact mode once
      // everything is written; the others keep the default (0777 less the umask), like tar.
      mkdirSync(join(dest, key), 0o777);
      made.add(key);
    }
  };
  let index = 0;
  let openFd: number | undefined;
  let failure: Error | undefined;
  const parser = new Parser({
    strict: true,
    brotli: false,
    zstd: false,
    maxMetaEntrySize: MAX_EXTENSION_HEADER_BYTES,
  });
  parser.on("error", (error: Error) => {
    failure ??= new ArchiveExtractionError(`the archive could not be read (${error.message})`);
  });
  parser.on("ignoredEntry", () => {
    failure ??= changed();
  });
  parser.on("entry", (entry: ReadEntry) => {
    const want = expected[index++];
    const components = want ? entryComponents(want) : [];
    if (
      failure ||
      !want ||
      want.path !== entry.path ||
      want.type !== entry.type ||
      want.size !== entry.size ||
      want.linkpath !== (entry.linkpath || undefined) ||
      !components.every(isPlainName)
    ) {
      failure ??= changed();
      entry.resume();
      return;
    }
    if (want.kind === "directory") ensureDirectory(components);
    if (want.kind !== "file") {
      // The root keeps the caller's mode; symlinks are created once every file is written.
      entry.resume();
      return;
    }
    ensureDirectory(components.slice(0, -1));
    const fd = openSync(join(dest, ...components), CREATE_FLAGS, 0o600);
    openFd = fd;
    entry.on("data", (chunk: Buffer) => {
      for (let at = 0; at < chunk.length;) at += writeSync(fd, chunk, at, chunk.length - at);
    });
    entry.on("end", () => {
      // Created 0600 while being written; then its own mode (0644 when the header had none).
      fchmodSync(fd, (want.mode ?? 0o644) & PERMISSIONS);
      const mtime = (entry.mtime as Date | undefined) ?? new Date();
      futimesSync(fd, mtime, mtime);
      openFd = undefined;
      closeSync(fd);
    });
  });
  const ended = new Promise<void>((resolve) => parser.once("end", () => resolve()));
  try {
    for await (const chunk of readArchiveBytes(handle, limits, {
      gzip: false,
      bytesRead: 0,
      bytesInflated: 0,
    })) {
      // Entry handlers run synchronously inside write(): a failing system call throws here.
      parser.write(chunk);
      if (failure) break;
    }
    if (!failure) {
      parser.end();
      await ended;
    }
  } finally {
    if (openFd !== undefined) closeSync(openFd);
  }
  if (failure) throw failure;
  if (index !== expected.length) throw changed();
}
