// Pure policy for pax extended headers (R-UA-2). A pax record can rename the next entry, resize
// it, or (in a global header) every entry after it; different tar readers disagree on the odd
// cases, which is how "validated one thing, extracted another" attacks work. So records must be
// strictly well formed, and only keys whose meaning every reader shares are accepted.

export type PaxRecord = readonly [key: string, value: string];
export type PaxParse = { ok: true; records: PaxRecord[] } | { ok: false; reason: string };

/** Parses "<len> <key>=<value>\n" records; anything node-tar's line parser would read differently fails. */
export function parsePaxRecords(body: Buffer): PaxParse {
  const records: PaxRecord[] = [];
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    if (space < 0 || space - at > 20) return { ok: false, reason: "record without a length" };
    const lengthText = body.toString("latin1", at, space);
    if (!/^[1-9][0-9]*$/.test(lengthText))
      return { ok: false, reason: "record length is not a number" };
    const length = Number(lengthText);
    const end = at + length;
    if (end > body.length || body[end - 1] !== 0x0a) {
      return { ok: false, reason: "record length does not match its text" };
    }
    const text = body.subarray(space + 1, end - 1);
    // A newline inside a value is legal pax, but node-tar splits records on newlines.
    if (text.includes(0x0a)) return { ok: false, reason: "record value contains a newline" };
    if (text.includes(0x00)) return { ok: false, reason: "record contains a NUL byte" };
    const equals = text.indexOf(0x3d);
    if (equals <= 0) return { ok: false, reason: "record without a key" };
    records.push([text.toString("utf8", 0, equals), text.toString("utf8", equals + 1)]);
    at = end;
  }
  return { ok: true, records };
}

const DECIMAL = /^[0-9]+$/;
const TIME = /^-?[0-9]+(\.[0-9]+)?$/;

// Keys whose values node-tar, GNU tar and libarchive interpret the same way.
const LOCAL_KEYS: Record<string, RegExp | null> = {
  path: null,
  linkpath: null,
  size: DECIMAL,
  mtime: TIME,
  atime: TIME,
  ctime: TIME,
  uid: DECIMAL,
  gid: DECIMAL,
  uname: null,
  gname: null,
  comment: null,
  charset: null,
  hdrcharset: null,
  "SCHILY.dev": DECIMAL,
  "SCHILY.ino": DECIMAL,
  "SCHILY.nlink": DECIMAL,
  "SCHILY.fflags": null,
  "LIBARCHIVE.creationtime": TIME,
};
// Attribute-only namespaces that no reader turns into a path, a size or a file type.
const LOCAL_PREFIXES = ["SCHILY.xattr.", "LIBARCHIVE.xattr.", "SCHILY.acl.", "RHT.security."];

// A global header applies to every later entry. Renaming, resizing or retargeting all of them at
// once has no honest use (node-tar would even apply a global linkpath to every symlink).
const GLOBAL_KEYS: Record<string, RegExp | null> = {
  comment: null,
  charset: null,
  hdrcharset: null,
  mtime: TIME,
  atime: TIME,
  ctime: TIME,
  uid: DECIMAL,
  gid: DECIMAL,
  uname: null,
  gname: null,
};

/** Returns why the records are refused, or undefined when every key is acceptable. */
export function checkPaxRecords(
  records: readonly PaxRecord[],
  global: boolean,
): string | undefined {
  const allowed = global ? GLOBAL_KEYS : LOCAL_KEYS;
  for (const [key, value] of records) {
    const format = Object.hasOwn(allowed, key) ? allowed[key] : undefined;
    if (format === undefined) {
      if (!global && LOCAL_PREFIXES.some((p) => key.startsWith(p))) continue;
      // The key itself may be attacker text; report only its shape.
      return global
        ? "a global extended header sets a key that would change later entries"
        : "an extended header uses an unsupported key";
    }
    if (format && !format.test(value)) return "an extended header has a malformed numeric value";
  }
  return undefined;
}
