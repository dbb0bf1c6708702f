// Writes tar bytes by hand, field by field, so tests can produce archives no well-behaved tar
// writer would: traversal names, hostile link targets, devices, forged extension headers, bad
// checksums, truncation. Nothing here is validated; that is the point.
import { gzipSync } from "node:zlib";

export interface RawHeader {
  name: string | Buffer;
  /** Typeflag character: "0" file, "1" hard link, "2" symlink, "3"/"4" devices, "5" dir, "6" FIFO, ... */
  type: string;
  size?: number;
  mode?: number;
  linkname?: string | Buffer;
  prefix?: string;
  devmajor?: number;
  devminor?: number;
  /** Raw bytes for the 12-byte size field (overrides `size` in the header only). */
  sizeField?: Buffer;
  /** Corrupt the checksum. */
  badChecksum?: boolean;
}

function put(block: Buffer, offset: number, length: number, value: string | Buffer): void {
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : value;
  bytes.copy(block, offset, 0, Math.min(bytes.length, length));
}

function octal(value: number, length: number): string {
  return `${value.toString(8).padStart(length - 1, "0")}\0`;
}

export function header(h: RawHeader): Buffer {
  const block = Buffer.alloc(512);
  put(block, 0, 100, h.name);
  put(block, 100, 8, octal(h.mode ?? (h.type === "5" ? 0o755 : 0o644), 8));
  put(block, 108, 8, octal(0, 8));
  put(block, 116, 8, octal(0, 8));
  if (h.sizeField) put(block, 124, 12, h.sizeField);
  else put(block, 124, 12, octal(h.size ?? 0, 12));
  put(block, 136, 12, octal(1_700_000_000, 12));
  block.write(h.type, 156, 1, "latin1");
  if (h.linkname !== undefined) put(block, 157, 100, h.linkname);
  put(block, 257, 8, "ustar\u000000");
  put(block, 329, 8, octal(h.devmajor ?? 0, 8));
  put(block, 337, 8, octal(h.devminor ?? 0, 8));
  if (h.prefix) put(block, 345, 155, h.prefix);
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  if (h.badChecksum) sum += 1;
  put(block, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return block;
}

export function pad(body: Buffer): Buffer {
  const rest = (512 - (body.length % 512)) % 512;
  return Buffer.concat([body, Buffer.alloc(rest)]);
}

export function file(name: string | Buffer, content = "", extra: Partial<RawHeader> = {}): Buffer {
  const body = Buffer.from(content);
  return Buffer.concat([header({ name, type: "0", size: body.length, ...extra }), pad(body)]);
}

export function dir(name: string, extra: Partial<RawHeader> = {}): Buffer {
  return header({ name, type: "5", ...extra });
}

export function symlink(name: string, target: string | Buffer): Buffer {
  return header({ name, type: "2", linkname: target, mode: 0o777 });
}

export function hardlink(name: string, target: string): Buffer {
  return header({ name, type: "1", linkname: target });
}

export function special(name: string, type: string, extra: Partial<RawHeader> = {}): Buffer {
  return header({ name, type, ...extra });
}

/** A pax record "<len> key=value\n" with its self-including length. */
export function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length++;
  return `${length}${body}`;
}

/** A pax extended ("x") or global ("g") header with the given body. */
export function pax(records: string | Buffer, type: "x" | "g" = "x"): Buffer {
  const body = typeof records === "string" ? Buffer.from(records) : records;
  return Buffer.concat([header({ name: "PaxHeader/entry", type, size: body.length }), pad(body)]);
}

/** A GNU long-name ("L") or long-link ("K") header. */
export function gnuLong(type: "L" | "K", value: string | Buffer): Buffer {
  const body = Buffer.concat([
    typeof value === "string" ? Buffer.from(value) : value,
    Buffer.alloc(1),
  ]);
  return Buffer.concat([header({ name: "././@LongLink", type, size: body.length }), pad(body)]);
}

export const EOF = Buffer.alloc(1024);

export function tar(...parts: Buffer[]): Buffer {
  return Buffer.concat([...parts, EOF]);
}

export function gzip(data: Buffer): Buffer {
  return gzipSync(data);
}

/**
 * A gzip bomb: a valid header for a huge file, then `mebibytes` MiB of zeros, built from
 * concatenated gzip members so the test never holds the inflated data itself.
 */
export function gzipBomb(mebibytes: number): Buffer {
  const member = gzipSync(Buffer.alloc(1024 * 1024), { level: 9 });
  const head = gzipSync(header({ name: "bomb.bin", type: "0", size: mebibytes * 1024 * 1024 }));
  return Buffer.concat([head, ...Array.from({ length: mebibytes }, () => member)]);
}
