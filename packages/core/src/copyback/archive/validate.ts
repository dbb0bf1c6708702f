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

/**
 * An entry of a safe archive, in archive order, as extraction must meet it again. Compact on
 * purpose (200,000 of them are held between validation and extraction): the normalized
 * path is one string (`key`, the validated plain components joined by "/", the same string as
 * `path` whenever the archive spelled it that way) and the mtime a number, not an array of
 * component strings and a Date per entry.
 */
export interface ValidatedEntry {
  path: string;
  type: string;
  kind: TreeEntryKind | "root";
  /** The validated components joined by "/" ("" for the archive root): entryComponents() splits it. */
  key: string;
  size: number;
  mode: number | undefined;
  linkpath: string | undefined;
  /** The header's mtime in milliseconds, when it has one. */
  mtimeMs: number | undefined;
  /** Where the body starts in the tar bytes. */
  offset: number;
}

/** The entry's validated plain components (no component contains "/", so the key splits back exactly). */
export function entryComponents(entry: Pick<ValidatedEntry, "key">): string[] {
  return entry.key === "" ? [] : entry.key.split("/");
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
  const entries: ValidatedEntry[] = [];
  const reference = startReferenceParser();

  const onEntry = (entry: TarEntry) => {
    reference.walked(entry);
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
    const joined = checked.components.join("/");
    // One string per entry, shared by the tree policy's map and the entry list.
    const key = joined === entry.path ? entry.path : joined;
    const conflict = tree.add(entry.path, checked.components, kind, entry.linkpath, resolve, key);
    if (conflict) return report(conflict);
    entries.push({
      path: entry.path,
      type: entry.type,
      kind: checked.components.length === 0 ? "root" : kind,
      key,
      size: entry.size,
      mode: entry.mode,
      linkpath: entry.linkpath,
      mtimeMs: entry.mtime?.getTime(),
      offset: entry.offset,
    });
  };

  const walker = new TarWalker(limits, onEntry, report);
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
    const disagreement = await reference.compare();
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
  /** Our walker's next entry, in archive order. */
  walked(entry: TarEntry): void;
  compare(): Promise<ArchiveViolation | undefined>;
}

/** What both readers must agree on for each entry. */
interface ReadEntryFacts {
  path: string;
  type: string;
  size: number;
  linkpath: string | undefined;
}

/**
 * node-tar's Parser over the same bytes, recording what the extractor would be handed. The two
 * readers' entries are compared pair by pair as soon as both have read one, and only the first
 * disagreement is kept: memory follows how far one reader is ahead of the other (a chunk's
 * worth of entries), not the size of the archive (up to 200,000 entries).
 */
function startReferenceParser(): ReferenceParser {
  const ours = new EntryQueue();
  const theirs = new EntryQueue();
  let index = 0;
  let walkedAny = false;
  let disagreement: { index: number; path: string } | undefined;
  const pair = () => {
    while (disagreement === undefined && ours.size > 0 && theirs.size > 0) {
      const a = ours.shift() as ReadEntryFacts;
      const b = theirs.shift() as ReadEntryFacts;
      if (a.path !== b.path || a.type !== b.type || a.size !== b.size || a.linkpath !== b.linkpath) {
        disagreement = { index, path: a.path };
      }
      index += 1;
    }
    // Past a disagreement nothing more is compared: what is left is only dropped.
    if (disagreement !== undefined) {
      ours.clear();
      theirs.clear();
    }
  };
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
      if (disagreement !== undefined) return;
      theirs.push({
        path: entry.path,
        type: entry.type,
        size: entry.size,
        linkpath: entry.linkpath || undefined,
      });
      pair();
    }
  });
  parser.on("warn", (code: string) => warnings.push(code));
  parser.on("error", (error: { tarCode?: string; code?: string }) =>
    warnings.push(String(error.tarCode ?? error.code)),
  );
  const ended = new Promise<void>((resolve) => parser.once("end", () => resolve()));

  return {
    parser,
    walked(entry) {
      walkedAny = true;
      if (disagreement !== undefined) return;
      ours.push({ path: entry.path, type: entry.type, size: entry.size, linkpath: entry.linkpath });
      pair();
    },
    async compare() {
      parser.end();
      await ended;
      // node-tar calls an archive without a single entry "unrecognized"; an empty workspace
      // legitimately exports exactly that.
      const meaningful = walkedAny ? warnings : warnings.filter((w) => w !== "TAR_BAD_ARCHIVE");
      if (meaningful.length > 0) {
        return violation(
          "malformed_archive",
          "",
          `node-tar rejects the archive (${meaningful[0]})`,
        );
      }
      // One reader saw more entries than the other: the first unpaired one disagrees.
      const found =
        disagreement ??
        (ours.size > 0 || theirs.size > 0
          ? { index, path: (ours.peek() ?? theirs.peek())?.path ?? "" }
          : undefined);
      if (found === undefined) return undefined;
      return violation(
        "malformed_archive",
        found.path,
        `tar readers disagree about entry ${found.index + 1}`,
      );
    },
  };
}

/** A first-in, first-out list that does not shift arrays (shift is linear in V8's worst case). */
class EntryQueue {
  private items: (ReadEntryFacts | undefined)[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: ReadEntryFacts): void {
    this.items.push(item);
  }

  peek(): ReadEntryFacts | undefined {
    return this.items[this.head];
  }

  shift(): ReadEntryFacts | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head === this.items.length) this.clear();
    else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}
