// Validation of a manifest that comes back from storage (the baseline) or over the wire (a
// snapshot). A merge trusts the baseline to decide what it may delete, so a malformed one is
// refused before anything runs.
//
// One parse per manifest per copyback: what parseManifest returns is frozen (the manifest, its
// entry array and every entry) and remembered, so handing it to parseManifest again (the delta
// receive passes its result to the merge, finalization passes the stored baseline it parsed)
// returns it as is. A frozen value cannot have changed since it was checked; anything else, a
// copy included, is checked in full.
import { ManifestError } from "./errors";
import { comparePaths, isSafeRelativePath, parentOf } from "./paths";
import type { Manifest, ManifestEntry } from "./types";

const validated = new WeakSet<object>();

/** True for a manifest parseManifest returned (frozen, sorted, every rule checked). */
export function isValidatedManifest(value: unknown): value is Manifest {
  return typeof value === "object" && value !== null && validated.has(value);
}

/**
 * Returns a sorted, frozen copy, or throws ManifestError("invalid_manifest"). Checks what the
 * schema cannot: normalized relative paths, no duplicates, every parent listed as a directory,
 * and the fields each type requires (files: sha256; symlinks: target without NUL).
 */
export function parseManifest(value: unknown): Manifest {
  if (isValidatedManifest(value)) return value;
  return sealed(copyEntries(value));
}

/**
 * The manifest's schema, written out (a zod schema took 8-10 ms for the 10,540 entries
 * every delta copyback receives; this loop about 2): `{ version: 1, entries: [...] }`, each entry
 * `{ path: string, type: "file" | "directory" | "symlink", mode: integer 0..0o777, sha256?: 64
 * lower-case hex digits, size?: safe integer >= 0, target?: non-empty string }`. Every field
 * present is checked whatever the type; the copy keeps only those the type carries, so unknown
 * keys are dropped, as the schema's parse did.
 */
function copyEntries(value: unknown): ManifestEntry[] {
  const invalid = (at: string, why: string): never => {
    throw new ManifestError("invalid_manifest", `Invalid manifest: ${at}: ${why}`);
  };
  if (!isRecord(value)) return invalid("", "not an object");
  if (value.version !== 1) invalid("version", "must be 1");
  const list = value.entries;
  if (!Array.isArray(list)) return invalid("entries", "not an array");
  const entries = new Array<ManifestEntry>(list.length);
  for (let i = 0; i < list.length; i++) {
    const entry: unknown = list[i];
    if (!isRecord(entry)) return invalid(`entries.${i}`, "not an object");
    const broken = brokenField(entry);
    if (broken) invalid(`entries.${i}.${broken[0]}`, broken[1]);
    const { path, type, mode, sha256, size, target } = entry;
    const out: ManifestEntry = { path: path as string, type: type as ManifestEntry["type"], mode: mode as number };
    if (type === "file") {
      out.sha256 = sha256 as string | undefined;
      if (size !== undefined) out.size = size as number;
    } else if (type === "symlink") {
      out.target = target as string | undefined;
    }
    entries[i] = out;
  }
  return entries;
}

/**
 * The entry schema's field rules, for parseManifest and sealManifest alike: every field present
 * is checked whatever the entry's type. The first broken field and why, or null.
 */
function brokenField(e: Record<string, unknown>): [field: string, why: string] | null {
  if (typeof e.path !== "string") return ["path", "not a string"];
  if (e.type !== "file" && e.type !== "directory" && e.type !== "symlink") return ["type", "not file, directory or symlink"];
  if (typeof e.mode !== "number" || !Number.isInteger(e.mode) || e.mode < 0 || e.mode > 0o777) return ["mode", "not an integer from 0 to 0o777"];
  if (e.sha256 !== undefined && (typeof e.sha256 !== "string" || !SHA256.test(e.sha256))) return ["sha256", "not 64 lower-case hex digits"];
  if (e.size !== undefined && (typeof e.size !== "number" || !Number.isSafeInteger(e.size) || e.size < 0)) return ["size", "not a natural number"];
  if (e.target !== undefined && (typeof e.target !== "string" || e.target.length === 0)) return ["target", "not a non-empty string"];
  return null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const ENTRY_KEYS = new Set(["path", "type", "mode", "sha256", "size", "target"]);
const SHA256 = /^[0-9a-f]{64}$/;

/**
 * parseManifest for a manifest this process has just built itself (receive.ts: the snapshot it
 * wrote and hashed): the same schema and rules, checked on the entries in place, which are then
 * frozen, instead of the schema's copy and a second copy of every entry (at 200,000
 * entries). Stricter than the schema where it would strip: an entry with a key the manifest does
 * not have, or a field its type does not carry, is refused. The entry array is sorted in place if
 * needed. The result is remembered like parseManifest's, so the merge does not check it again.
 */
export function sealManifest(manifest: Manifest): Manifest {
  if (isValidatedManifest(manifest)) return manifest;
  const value = manifest as unknown as { version?: unknown; entries?: unknown } | null;
  if (typeof value !== "object" || value === null || value.version !== 1 || !Array.isArray(value.entries)) {
    throw new ManifestError("invalid_manifest", "Invalid manifest: malformed");
  }
  const entries = value.entries as ManifestEntry[];
  for (const entry of entries) checkEntryShape(entry);
  return sealed(entries);
}

/** The entry schema of parseManifest, without copying; plus: no field the type does not carry. */
function checkEntryShape(entry: unknown): void {
  const bad = (why: string): never => {
    throw new ManifestError("invalid_manifest", `Invalid manifest: entries: ${why}`);
  };
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) bad("not an object");
  const e = entry as Record<string, unknown>;
  // A key that is present is never undefined here, so brokenField's "present" is `in`.
  for (const key of Object.keys(e)) if (!ENTRY_KEYS.has(key) || e[key] === undefined) bad(`unexpected field ${key}`);
  const broken = brokenField(e);
  if (broken) bad(`${broken[0]} ${broken[1]}`);
  const allowed = e.type === "file" ? ["sha256", "size"] : e.type === "symlink" ? ["target"] : [];
  for (const key of ["sha256", "size", "target"]) if (key in e && !allowed.includes(key)) bad(`${key} on a ${String(e.type)}`);
}

/** The rules the schema cannot express, over entries of the right shape; freezes and remembers. */
function sealed(entries: ManifestEntry[]): Manifest {
  // Stored manifests are written sorted: check the order (one comparison per entry) and sort
  // only when it is not.
  if (!isSortedByPath(entries)) entries.sort((a, b) => comparePaths(a.path, b.path));
  // Sorted by code units, a parent ("a") comes before its children ("a/b"): the directories
  // seen so far are enough to check every parent, and equal neighbours are duplicates.
  const directories = new Set<string>();
  let previous: string | undefined;
  for (const entry of entries) {
    const p = entry.path;
    if (!isSafeRelativePath(p)) invalidEntry(p, "not a normalized relative path");
    if (p === previous) invalidEntry(p, "listed twice");
    const parent = parentOf(p);
    if (parent !== "" && !directories.has(parent))
      invalidEntry(p, "its parent is not listed as a directory");
    if (entry.type === "directory") directories.add(p);
    else if (entry.type === "file" && entry.sha256 === undefined)
      invalidEntry(p, "a file needs sha256");
    else if (
      entry.type === "symlink" &&
      (entry.target === undefined || entry.target.includes("\0"))
    )
      invalidEntry(p, "a symlink needs a target");
    Object.freeze(entry);
    previous = p;
  }
  const manifest: Manifest = Object.freeze({
    version: 1,
    entries: Object.freeze(entries),
  }) as Manifest;
  validated.add(manifest);
  return manifest;
}

function isSortedByPath(entries: readonly ManifestEntry[]): boolean {
  for (let i = 1; i < entries.length; i++) {
    if ((entries[i - 1] as ManifestEntry).path > (entries[i] as ManifestEntry).path) return false;
  }
  return true;
}

function invalidEntry(path: string, why: string): never {
  throw new ManifestError(
    "invalid_manifest",
    `Invalid manifest entry ${JSON.stringify(path)}: ${why}`,
    path,
  );
}
