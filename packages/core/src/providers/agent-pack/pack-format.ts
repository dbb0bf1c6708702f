// R-PV-1: what an agent pack is, pure. An agent pack is the agent's runtime at a pinned version:
// a directory on the controller's host holding the runtime's files and a manifest,
// `copyback-pack.json`:
//   { "schema": "copyback.agent-pack.v1", "runtime": "opencode", "version": "1.4.2",
//     "versionCommand": ["bin/opencode", "--version"] }
// `versionCommand` runs inside the placed pack (its first element a file of the pack) and prints
// the runtime's version as the first line of its standard output.
//
// The pack's digest is a tree digest that a POSIX shell in the sandbox can compute with
// find, sort and sha256sum alone (the verification command, VERIFY_SCRIPT): one line
// `<sha256 of the file>  ./<relative path>` per regular file, sorted bytewise by `./<path>`, each
// ending in a newline, and the sha256 of those lines. The controller computes the same from its host
// copy (read-pack.ts), so the sandbox's answer is compared with bytes the controller read itself.
// Names that sha256sum would escape (a backslash, a newline, any control character) are refused
// in a pack, and so are links and special files: the tree means the same on both sides.
import { createHash } from "node:crypto";
import { z } from "zod";
import { DomainError } from "../../errors";

export const PACK_MANIFEST_FILE = "copyback-pack.json";
export const PACK_MANIFEST_SCHEMA = "copyback.agent-pack.v1";

/** The environment variable that tells the agent's command where the placed pack is. */
export const AGENT_PACK_DIR_VARIABLE = "COPYBACK_AGENT_PACK_DIR";

/** A pack is the runtime, not a workspace: bounded so placing and hashing it stays cheap. */
export const MAX_PACK_FILES = 10_000;
export const MAX_PACK_BYTES = 1024 * 1024 * 1024;

const SHA256_HEX = /^[0-9a-f]{64}$/;
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\\]/u;

/** One component of a pack path: what both sides hash and place without escaping. */
export function safePackComponent(name: string): boolean {
  return name !== "" && name !== "." && name !== ".." && !name.includes("/") && !UNSAFE.test(name) && Buffer.byteLength(name, "utf8") <= 255;
}

/** A relative pack path `a/b/c` of safe components, or a typed refusal. */
export function checkPackPath(relativePath: string): string[] {
  const parts = relativePath.split("/");
  if (relativePath.length > 4096 || !parts.every(safePackComponent)) {
    throw new DomainError("invalid", "agent_pack_path_invalid", `The agent pack holds a path that cannot be verified: ${JSON.stringify(relativePath)}.`);
  }
  return parts;
}

export const packManifest = z.strictObject({
  schema: z.literal(PACK_MANIFEST_SCHEMA),
  runtime: z.string().trim().min(1).max(200),
  version: z.string().trim().min(1).max(200),
  versionCommand: z.array(z.string().min(1).max(4096)).min(1).max(32),
});
export type PackManifest = z.infer<typeof packManifest>;

export const sha256Hex = z.string().regex(SHA256_HEX, "a lowercase hex sha256 digest");

/** One file of the tree digest: its relative path and the sha256 of its bytes. */
export interface PackDigestEntry {
  relativePath: string;
  sha256: string;
}

/** The tree digest of VERIFY_SCRIPT, from the files' own digests (pure). */
export function treeDigest(entries: readonly PackDigestEntry[]): string {
  const lines = entries
    .map((entry) => ({ key: Buffer.from(`./${entry.relativePath}`, "utf8"), sha256: entry.sha256 }))
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map((entry) => `${entry.sha256}  ${entry.key.toString("utf8")}\n`);
  return createHash("sha256").update(lines.join(""), "utf8").digest("hex");
}

/**
 * The verification read, run through the provider's exec as
 * `sh -c VERIFY_SCRIPT copyback-pack-verify <pack directory> <versionCommand...>`: it hashes the
 * placed tree and runs the version command, and prints two lines. Exit 3: the directory is not
 * there; 4: a file could not be hashed; 5: the version command failed. Any nonzero exit is a
 * completed read that proves the pack unusable (incompatible), unlike a timeout or a lost answer.
 */
export const VERIFY_SCRIPT = [
  "set -u",
  'dir=$1; shift',
  'cd "$dir" || exit 3',
  'list=$(find . -type f -print | LC_ALL=C sort) || exit 4',
  '[ -n "$list" ] || exit 4',
  'sums=$(printf \'%s\\n\' "$list" | while IFS= read -r f; do sha256sum -- "$f" || exit 4; done) || exit 4',
  'digest=$(printf \'%s\\n\' "$sums" | sha256sum | cut -d " " -f 1) || exit 4',
  'out=$("$@" </dev/null) || exit 5',
  'version=$(printf \'%s\\n\' "$out" | head -n 1)',
  "printf 'copyback-pack-digest=%s\\n' \"$digest\"",
  "printf 'copyback-pack-version=%s\\n' \"$version\"",
].join("\n");

export const VERIFY_ARGV0 = "copyback-pack-verify";

/** The exec argv of one verification read of the pack placed at `directory`. */
export function verifyArgv(directory: string, manifest: PackManifest): string[] {
  const [program, ...args] = manifest.versionCommand;
  // `./` so that the pack's own program runs, never one of the same name on the sandbox's PATH.
  return ["/bin/sh", "-c", VERIFY_SCRIPT, VERIFY_ARGV0, directory, `./${program as string}`, ...args];
}

/** What the read printed, or null when its output is not the two lines VERIFY_SCRIPT prints. */
export function parseVerifyReport(stdout: string): { digest: string; version: string } | null {
  const digest = /^copyback-pack-digest=([0-9a-f]{64})$/m.exec(stdout)?.[1];
  const version = /^copyback-pack-version=(.*)$/m.exec(stdout)?.[1];
  if (digest === undefined || version === undefined) return null;
  return { digest, version: version.trim() };
}
