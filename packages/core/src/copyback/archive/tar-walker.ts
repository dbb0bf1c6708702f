// Frames a tar byte stream into entries exactly the way node-tar's Parser does (headers are
// decoded with node-tar's own Header and Pax classes), while refusing every framing trick that
// another reader could interpret differently: bad checksums, hidden text after a field's NUL,
// malformed or suspicious extended headers, bodies on entries that cannot have one, lone zero
// blocks, truncation. It does not judge paths or types; validate.ts does. (R-UA-2)
import { Header, Pax, type HeaderData } from "tar";
import { isPlainlyUnsafePath } from "./entry-path";
import { MAX_EXTENSION_HEADER_BYTES, type ArchiveLimits } from "./limits";
import { checkPaxRecords, parsePaxRecords } from "./pax-policy";
import { hidesTextAfterNul, isBytePrefix, rawSizeField, ustarField } from "./ustar-fields";
import { violation, type ArchiveViolation, type ArchiveViolationCode } from "./violations";

const BLOCK = 512;

/** One file system entry as node-tar will present it to the extractor. */
export interface TarEntry {
  index: number;
  /** Effective path (extended headers applied), exactly node-tar's ReadEntry.path. */
  path: string;
  /** node-tar's type name ("File", "Directory", "SymbolicLink", ... or "Unsupported"). */
  type: string;
  /** Body bytes that follow the header. */
  size: number;
  linkpath: string | undefined;
  mode: number | undefined;
  /** Modification time as node-tar's ReadEntry reports it (extended headers applied). */
  mtime: Date | undefined;
  /** Where the entry's body starts in the tar byte stream (extraction reads it from there). */
  offset: number;
}

/** A violation after which the rest of the stream cannot be trusted or is not worth reading. */
export class FatalArchiveViolation extends Error {
  constructor(readonly violation: ArchiveViolation) {
    super(violation.detail);
    this.name = "FatalArchiveViolation";
  }
}

export function fatal(
  code: ArchiveViolationCode,
  path: string,
  detail: string,
): FatalArchiveViolation {
  return new FatalArchiveViolation(violation(code, path, detail));
}

const META_TYPES = new Set([
  "NextFileHasLongLinkpath",
  "NextFileHasLongPath",
  "OldGnuLongPath",
  "GlobalExtendedHeader",
  "ExtendedHeader",
  "OldExtendedHeader",
]);
const REGULAR_TYPES = new Set(["File", "OldFile", "ContiguousFile"]);

interface PendingMeta {
  type: string;
  remaining: number;
  padding: number;
  parts: Buffer[];
}

const padding = (size: number) => (BLOCK - (size % BLOCK)) % BLOCK;

function validDate(value: unknown): Date | undefined {
  return value instanceof Date && !Number.isNaN(value.getTime()) ? value : undefined;
}

export class TarWalker {
  /** Set once the end-of-archive marker was read; later bytes are never interpreted. */
  done = false;
  entries = 0;
  totalBytes = 0;
  private metadataBytes = 0;
  private partial: Buffer[] = [];
  private partialLength = 0;
  private skip = 0;
  private meta: PendingMeta | undefined;
  private ex: HeaderData | undefined;
  private gex: HeaderData | undefined;
  private sawZeroBlock = false;
  private position = 0;
  /** The GNU long name / long link text of the next entry, as that header gave it. */
  private gnuLong: { path?: string; linkpath?: string } | undefined;

  constructor(
    private readonly limits: ArchiveLimits,
    private readonly onEntry: (entry: TarEntry) => void,
    private readonly onViolation: (v: ArchiveViolation) => void,
  ) {}

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && !this.done) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at);
        this.skip -= n;
        at += n;
        this.position += n;
        continue;
      }
      if (this.meta) {
        const n = Math.min(this.meta.remaining, chunk.length - at);
        this.meta.parts.push(Buffer.from(chunk.subarray(at, at + n)));
        this.meta.remaining -= n;
        at += n;
        this.position += n;
        if (this.meta.remaining === 0) this.finishMeta(this.meta);
        continue;
      }
      let block: Buffer;
      if (this.partialLength > 0 || chunk.length - at < BLOCK) {
        const n = Math.min(BLOCK - this.partialLength, chunk.length - at);
        this.partial.push(chunk.subarray(at, at + n));
        this.partialLength += n;
        at += n;
        if (this.partialLength < BLOCK) continue;
        block = Buffer.concat(this.partial, BLOCK);
        this.partial = [];
        this.partialLength = 0;
      } else {
        block = chunk.subarray(at, at + BLOCK);
        at += BLOCK;
      }
      this.position += BLOCK;
      this.header(block);
    }
  }

  /** The input ended: anything but a completed archive is a truncation. */
  end(): void {
    if (this.done) return;
    // A single zero block at the very end is accepted (some writers stop there).
    const clean = this.sawZeroBlock && this.skip === 0 && !this.meta && this.partialLength === 0;
    if (clean) {
      this.done = true;
      return;
    }
    if (this.position === 0 && this.partialLength === 0) {
      throw fatal("truncated_archive", "", "the archive is empty");
    }
    const inside = this.skip > 0 || this.meta !== undefined || this.partialLength > 0;
    throw fatal(
      "truncated_archive",
      "",
      inside ? "the archive ends inside an entry" : "the archive has no end-of-archive marker",
    );
  }

  private header(block: Buffer): void {
    let h: Header;
    try {
      h = new Header(block, 0, this.ex, this.gex);
    } catch {
      throw fatal(
        "malformed_archive",
        "",
        `unreadable tar header at byte ${this.position - BLOCK}`,
      );
    }
    if (h.nullBlock) {
      if (this.sawZeroBlock) this.done = true;
      this.sawZeroBlock = true;
      return;
    }
    const at = this.position - BLOCK;
    // node-tar reads on after one zero block, GNU tar stops there: entries after it would be
    // seen by one reader only.
    if (this.sawZeroBlock)
      throw fatal("malformed_archive", "", `tar header after a zero block at byte ${at}`);
    if (!h.cksumValid)
      throw fatal("malformed_archive", "", `tar header checksum mismatch at byte ${at}`);
    const type = h.type ?? "Unsupported";
    const ustar = block.toString("latin1", 257, 265) === "ustar\u000000";
    const prefixLength = block[475] !== 0 ? 155 : 130;
    // node-tar's field decoder drops only "\0" up to the next newline; text hidden after a NUL
    // would reach its path but not GNU tar's.
    if (
      hidesTextAfterNul(block, 0, 100) ||
      hidesTextAfterNul(block, 157, 100) ||
      (ustar && hidesTextAfterNul(block, 345, prefixLength))
    ) {
      throw fatal(
        "malformed_archive",
        "",
        `tar header hides text after a field terminator at byte ${at}`,
      );
    }
    if (!h.path) throw fatal("malformed_archive", "", `tar entry without a path at byte ${at}`);
    const size = rawSizeField(block);
    if (size === undefined)
      throw fatal("malformed_archive", h.path, "tar size field is not a valid number");
    const isLink = type === "Link" || type === "SymbolicLink";
    if (isLink && !h.linkpath)
      throw fatal("malformed_archive", h.path, "link entry without a target");
    if (!isLink && type !== "GlobalExtendedHeader" && type !== "ExtendedHeader" && h.linkpath) {
      throw fatal("malformed_archive", h.path, "link target on an entry that is not a link");
    }
    if (META_TYPES.has(type)) {
      this.startMeta(type, size, h.path);
      return;
    }
    this.entry(block, h, type, size);
  }

  private startMeta(type: string, size: number, path: string): void {
    if (size > MAX_EXTENSION_HEADER_BYTES) {
      throw fatal("metadata_too_large", path, "an extended header is larger than 1 MiB");
    }
    this.metadataBytes += size;
    if (this.metadataBytes > this.limits.maxMetadataBytes) {
      throw fatal(
        "metadata_too_large",
        path,
        `extended headers exceed ${this.limits.maxMetadataBytes} bytes`,
      );
    }
    // node-tar ignores an empty extended header; so do we.
    if (size === 0) return;
    this.meta = { type, remaining: size, padding: padding(size), parts: [] };
  }

  private finishMeta(meta: PendingMeta): void {
    this.meta = undefined;
    this.skip = meta.padding;
    const body = Buffer.concat(meta.parts);
    if (
      meta.type === "ExtendedHeader" ||
      meta.type === "OldExtendedHeader" ||
      meta.type === "GlobalExtendedHeader"
    ) {
      const global = meta.type === "GlobalExtendedHeader";
      const parsed = parsePaxRecords(body);
      const refusal = parsed.ok ? checkPaxRecords(parsed.records, global) : parsed.reason;
      if (refusal) throw fatal("suspicious_pax_header", "", refusal);
      if (global) this.gex = Pax.parse(body.toString("utf8"), this.gex, true);
      else this.ex = Pax.parse(body.toString("utf8"), this.ex, false);
      return;
    }
    // GNU long name / long link: the text up to the first NUL. Anything but NULs after it would
    // be read differently by node-tar (which keeps text after a newline) and GNU tar.
    const nul = body.indexOf(0);
    if (nul >= 0 && body.subarray(nul).some((b) => b !== 0)) {
      throw fatal(
        "suspicious_pax_header",
        "",
        "a GNU long-name header hides text after its terminator",
      );
    }
    const text = body.toString("utf8", 0, nul >= 0 ? nul : body.length);
    const ex: HeaderData = this.ex ?? (Object.create(null) as HeaderData);
    this.gnuLong ??= {};
    if (meta.type === "NextFileHasLongLinkpath") ex.linkpath = this.gnuLong.linkpath = text;
    else ex.path = this.gnuLong.path = text;
    this.ex = ex;
  }

  private entry(block: Buffer, h: Header, type: string, rawSize: number): void {
    const ex = this.ex;
    const gnuLong = this.gnuLong;
    this.ex = undefined;
    this.gnuLong = undefined;
    // node-tar's ReadEntry starts from the decoded header, then copies every field of the
    // extended header over it, then every field of the global one except the path. Mirror it.
    const effective = (key: "path" | "linkpath" | "size" | "mtime"): unknown => {
      let value: unknown = h[key];
      if (ex?.[key] !== undefined && ex[key] !== null) value = ex[key];
      if (key !== "path" && this.gex?.[key] !== undefined && this.gex[key] !== null)
        value = this.gex[key];
      return value;
    };
    const path = String(effective("path"));
    const linkpath = (effective("linkpath") as string | undefined) || undefined;
    const index = this.entries++;
    if (this.entries > this.limits.maxEntries) {
      throw fatal(
        "too_many_entries",
        path,
        `the archive has more than ${this.limits.maxEntries} entries`,
      );
    }
    // The bytes that follow the header (node-tar's ReadEntry.remain).
    const size = h.size ?? 0;
    if (REGULAR_TYPES.has(type)) {
      if (size > this.limits.maxEntryBytes) {
        throw fatal(
          "entry_too_large",
          path,
          `a file is larger than ${this.limits.maxEntryBytes} bytes`,
        );
      }
      this.totalBytes += size;
      if (this.totalBytes > this.limits.maxTotalBytes) {
        throw fatal(
          "total_too_large",
          path,
          `the files add up to more than ${this.limits.maxTotalBytes} bytes`,
        );
      }
    } else if (size > 0 || (type === "Directory" && (rawSize > 0 || (ex?.size ?? 0) > 0))) {
      // node-tar forces a directory's size to 0 (and parses its "body" as headers), other
      // readers skip it: either way one of them is misled.
      this.onViolation(
        violation("malformed_archive", path, "an entry that cannot hold data carries data"),
      );
    }
    if (type !== "Link" && type !== "SymbolicLink" && linkpath !== undefined) {
      this.onViolation(
        violation(
          "suspicious_pax_header",
          path,
          "an extended header gives a link target to an entry that is not a link",
        ),
      );
    }
    // An extended header replaced the ustar name or link fields; an older reader would use
    // those, so they must not be dangerous either.
    // Without extended headers `h` was decoded from the ustar fields alone: it is that reading.
    const raw = ex === undefined && this.gex === undefined ? h : new Header(block);
    // GNU tar (its default format) writes a name or link target longer than 100 bytes into a
    // long-name header and its first 100 bytes into the ustar field: that truncation is what
    // every GNU archive of a deep relative link looks like, not a second reading. Accepted only
    // when the effective value IS that GNU header's text and the ustar field's bytes are exactly
    // its prefix; node-tar's reading of the full value is cross-checked in validate.ts as ever.
    const gnuTruncation = (field: "path" | "linkpath", offset: number, value: string | undefined) =>
      value !== undefined &&
      gnuLong?.[field] === value &&
      isBytePrefix(ustarField(block, offset), value);
    if (
      raw.path !== path &&
      isPlainlyUnsafePath(raw.path ?? "") &&
      !gnuTruncation("path", 0, path)
    ) {
      this.onViolation(
        violation("suspicious_pax_header", path, "an extended header hides an unsafe ustar name"),
      );
    }
    if (
      raw.linkpath &&
      raw.linkpath !== linkpath &&
      isPlainlyUnsafePath(raw.linkpath) &&
      !gnuTruncation("linkpath", 157, linkpath)
    ) {
      this.onViolation(
        violation(
          "suspicious_pax_header",
          path,
          "an extended header hides an unsafe ustar link target",
        ),
      );
    }
    this.onEntry({
      index,
      path,
      type,
      size: Number(effective("size") ?? 0),
      linkpath,
      mode: typeof h.mode === "number" ? h.mode & 0o7777 : undefined,
      mtime: validDate(effective("mtime")),
      offset: this.position,
    });
    this.skip = size + padding(size);
  }
}
