// validateArchive (R-UA-2): reads the whole archive before anything is extracted and decides
// whether it is safe. Two readers walk the same bytes: our TarWalker (strict framing, every
// limit) and node-tar's own Parser (the one extraction uses). Their entry lists must agree, so
// what was validated is what will be extracted.
import type { FileHandle } from "node:fs/promises";
import { Parser, type ReadEntry } from "tar";
import { openArchive, readArchiveBytes, type ByteStats } from "./archive-bytes";
import { checkEntryPath, checkLinkTarget } from "./entry-path";
import { MAX_EXTENSION_HEADER_BYTES, resolveLimits, type ArchiveLimits } from "./limits";
import { FatalArchiveViolation, TarWalker, type TarEntry } from "./tar-walker";
import { ArchiveTreePolicy, type TreeEntryKind } from "./tree-policy";
import { violation, type ArchiveViolation } from "./violations";

export type ArchiveValidation =
  | { kind: "safe"; entries: number; totalBytes: number }
  | { kind: "rejected"; violations: ArchiveViolation[] };

/** An entry of a safe archive, in archive order, as extraction must meet it again. */
export interface ValidatedEntry {
  path: string;
  type: string;
  kind: TreeEntryKind | "root";
  components: string[];
  size: number;
  mode: number | undefined;
  linkpath: string | undefined;
  mtime: Date | undefined;
  /** Where the body starts in the tar bytes. */
  offset: number;
}

export interface ArchiveInspection {
  validation: ArchiveValidation;
  entries: ValidatedEntry[];
  stats: ByteStats;
}

/** Enough to explain a rejection; reading further would only cost time. */
const MAX_REPORTED_VIOLATIONS = 100;

const KIND_BY_TYPE: Record<string, TreeEntryKind> = {
  File: "file",
  OldFile: "file",
  ContiguousFile: "file",
  Directory: "directory",
  SymbolicLink: "symlink",
};

function typeViolation(entry: TarEntry): ArchiveViolation {
  switch (entry.type) {
    case "Link":
      return violation("hard_link", entry.path, "hard links are not accepted");
    case "CharacterDevice":
    case "BlockDevice":
      return violation("device", entry.path, "device files are not accepted");
    case "FIFO":
      return violation("fifo", entry.path, "named pipes are not accepted");
    default:
      return violation(
        "unsupported_type",
        entry.path,
        "only regular files, directories and symbolic links are accepted",
      );
  }
}

export async function validateArchive(
  file: string,
  limits?: Partial<ArchiveLimits>,
): Promise<ArchiveValidation> {
  const resolved = resolveLimits(limits);
  const handle = await openArchive(file);
  try {
    return (await inspectArchive(handle, resolved)).validation;
  } finally {
    await handle.close();
  }
}

export async function inspectArchive(
  handle: FileHandle,
  limits: ArchiveLimits,
): Promise<ArchiveInspection> {
  const stats: ByteStats = { gzip: false, bytesRead: 0, bytesInflated: 0 };
  return inspectTarBytes(readArchiveBytes(handle, limits, stats), limits, stats);
}

/**
 * The validation proper, over tar bytes from any source (a file, or a stream as it arrives:
 * receive.ts). Stops reading at the end-of-archive marker or once enough violations are known;
 * `stats` is the source's own byte count, passed through.
 */
export async function inspectTarBytes(
  source: AsyncIterable<Buffer>,
  limits: ArchiveLimits,
  stats: ByteStats,
): Promise<ArchiveInspection> {
  const violations: ArchiveViolation[] = [];
  const report = (v: ArchiveViolation) => {
    if (violations.length < MAX_REPORTED_VIOLATIONS) violations.push(v);
  };
  const tree = new ArchiveTreePolicy(limits);
  const walked: TarEntry[] = [];
  const entries: ValidatedEntry[] = [];

  const onEntry = (entry: TarEntry) => {
    walked.push(entry);
    const kind = KIND_BY_TYPE[entry.type];
    if (!kind) return report(typeViolation(entry));
    const checked = checkEntryPath(entry.path, limits);
    if (!checked.ok) return report(checked.violation);
    let resolve = true;
    if (kind === "symlink") {
      const bad = checkLinkTarget(entry.path, entry.linkpath ?? "", limits);
      if (bad) {
        report(bad);
        resolve = false;
      }
    }
    const conflict = tree.add(entry.path, checked.components, kind, entry.linkpath, resolve);
    if (conflict) return report(conflict);
    entries.push({
      path: entry.path,
      type: entry.type,
      kind: checked.components.length === 0 ? "root" : kind,
      components: checked.components,
      size: entry.size,
      mode: entry.mode,
      linkpath: entry.linkpath,
      mtime: entry.mtime,
      offset: entry.offset,
    });
  };

  const walker = new TarWalker(limits, onEntry, report);
  const reference = startReferenceParser();
  let readToTheEnd = false;
  try {
    for await (const chunk of source) {
      walker.push(chunk);
      reference.parser.write(chunk);
      if (walker.done || violations.length >= MAX_REPORTED_VIOLATIONS) break;
    }
    if (violations.length < MAX_REPORTED_VIOLATIONS) {
      walker.end();
      readToTheEnd = true;
    }
  } catch (error) {
    if (!(error instanceof FatalArchiveViolation)) throw error;
    report(error.violation);
  }
  // Links are judged once every entry is known (a link may lead through a later one); worth
  // doing whenever the whole archive was read, so a rejection explains every bad link.
  if (readToTheEnd) {
    for (const v of await tree.finish()) report(v);
  }
  if (violations.length === 0) {
    const disagreement = await reference.compare(walked);
    if (disagreement) report(disagreement);
  }
  if (violations.length > 0)
    return { validation: { kind: "rejected", violations }, entries: [], stats };
  return {
    validation: {
      kind: "safe",
      entries: entries.filter((e) => e.kind !== "root").length,
      totalBytes: walker.totalBytes,
    },
    entries,
    stats,
  };
}

interface ReferenceParser {
  parser: Parser;
  compare(walked: TarEntry[]): Promise<ArchiveViolation | undefined>;
}

/** node-tar's Parser over the same bytes, recording what the extractor would be handed. */
function startReferenceParser(): ReferenceParser {
  const seen: { path: string; type: string; size: number; linkpath: string | undefined }[] = [];
  const warnings: string[] = [];
  // Every entry is "filtered out", so node-tar frames it and skips its body without streaming
  // it anywhere; each one still arrives, fully decoded, as an ignoredEntry.
  const parser = new Parser({
    strict: false,
    brotli: false,
    zstd: false,
    maxMetaEntrySize: MAX_EXTENSION_HEADER_BYTES,
    filter: () => false,
  });
  parser.on("ignoredEntry", (entry: ReadEntry) => {
    if (!entry.meta) {
      seen.push({
        path: entry.path,
        type: entry.type,
        size: entry.size,
        linkpath: entry.linkpath || undefined,
      });
    }
  });
  parser.on("warn", (code: string) => warnings.push(code));
  parser.on("error", (error: { tarCode?: string; code?: string }) =>
    warnings.push(String(error.tarCode ?? error.code)),
  );
  const ended = new Promise<void>((resolve) => parser.once("end", () => resolve()));

  return {
    parser,
    async compare(walked) {
      parser.end();
      await ended;
      // node-tar calls an archive without a single entry "unrecognized"; an empty workspace
      // legitimately exports exactly that.
      const meaningful =
        walked.length === 0 ? warnings.filter((w) => w !== "TAR_BAD_ARCHIVE") : warnings;
      if (meaningful.length > 0) {
        return violation(
          "malformed_archive",
          "",
          `node-tar rejects the archive (${meaningful[0]})`,
        );
      }
      const count = Math.max(seen.length, walked.length);
      for (let i = 0; i < count; i++) {
        const a = walked[i];
        const b = seen[i];
        if (
          !a ||
          !b ||
          a.path !== b.path ||
          a.type !== b.type ||
          a.size !== b.size ||
          a.linkpath !== b.linkpath
        ) {
          return violation(
            "malformed_archive",
            a?.path ?? b?.path ?? "",
            `tar readers disagree about entry ${i + 1}`,
          );
        }
      }
      return undefined;
    },
  };
}
