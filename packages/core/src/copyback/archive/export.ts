// exportWorkspaceArchive: a plain tar stream of a workspace directory, the format every
// provider's export produces (the `local` provider uses this one).
import { Readable } from "node:stream";
// One exclusion rule for exports and manifests: what an export leaves out is exactly what the
// merge leaves alone on the host.
import { compileExclude } from "../manifest/exclude";
import { writeTar, type TarWriteOptions } from "./tar-writer";
import { streamWorkspace, type WorkspaceEntry } from "./workspace-walk";

export interface WorkspaceExportOptions {
  /** Trees left out of the export (manifest/exclude.ts: a bare name at any depth, or a root-relative path). */
  exclude?: string[];
  /**
   * How files sharing an inode are stored. Default "copy": each path carries its own bytes, so
   * a hard-linked tree (a pnpm store, a cache) passes validation as it is and the salvage
   * export is needed only for unsafe links. "link" (like GNU tar) writes hard-link entries,
   * which validation always rejects (hard_link); kept for tests of that rejection.
   */
  hardLinks?: TarWriteOptions["hardLinks"];
  /**
   * Set only when the stream goes straight into receiveWorkspaceArchive and nowhere else (the
   * `local` provider's copyback): its 1 MiB buffers then return to a pool once the receive is
   * done and the next export reuses them, sparing the page faults of fresh memory. A stream
   * that is also piped elsewhere must not set it: a buffer could be rewritten while that other
   * consumer still holds it.
   */
  recycleBuffers?: boolean;
}

const STREAM_BUFFER = 4 * 1024 * 1024;

/**
 * Turns a deferred listing (a list, or entries as they are listed) into a byte stream; listing
 * and I/O errors surface as stream errors.
 */
export function tarStream(
  list: () => Promise<WorkspaceEntry[]> | AsyncIterable<WorkspaceEntry>,
  opts: TarWriteOptions,
): NodeJS.ReadableStream {
  async function* generate(): AsyncGenerator<Buffer> {
    yield* writeTar(await list(), opts);
  }
  return Readable.from(generate(), { objectMode: false, highWaterMark: STREAM_BUFFER });
}

/**
 * Relative paths, each directory before its contents, names sorted; symlinks stored as
 * symlinks and never followed; excluded trees omitted; the workspace root itself has no entry.
 */
export function exportWorkspaceArchive(
  root: string,
  opts: WorkspaceExportOptions = {},
): NodeJS.ReadableStream {
  // Bad patterns are the caller's mistake: refuse them now rather than as a stream error.
  const excluded = compileExclude(opts.exclude);
  // Listed while it is written: the export never holds the whole listing (workspace-walk.ts).
  return tarStream(() => streamWorkspace(root, excluded), {
    hardLinks: opts.hardLinks ?? "copy",
    recycle: opts.recycleBuffers === true,
  });
}
