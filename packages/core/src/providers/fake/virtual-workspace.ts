// The fake provider's workspace: a map of relative paths to entries, in memory. It is exported
// as a real tar stream (built here with the copyback tar header encoder, in the same layout as
// copyback/archive/export.ts: each directory before its contents, names in code-unit order, no
// entry for the root) so that the real validation, diff and merge run on it; and it is seeded
// from a tar stream parsed by node-tar. No file is written anywhere.
import { Readable } from "node:stream";
import { Parser, type ReadEntry } from "tar";
import { DomainError } from "../../errors";
import { encodeHeader } from "../../copyback/archive/tar-header";
import { ancestorsOf, comparePaths, isSafeRelativePath } from "../../copyback/manifest/paths";

export type FakeEntry =
  | { kind: "file"; content: Buffer; mode: number }
  | { kind: "directory"; mode: number }
  | { kind: "symlink"; target: string };

/** Path -> entry. Parent directories are implied: they need no entry of their own. */
export type FakeWorkspace = Map<string, FakeEntry>;

/** What a script may write: text or bytes for a file, { symlink } for a link, null to delete. */
export type FakeFileChange = string | Buffer | { symlink: string } | { directory: true } | null;

const BLOCK = 512;
const FILE_MODE = 0o644;
const DIRECTORY_MODE = 0o755;

function badPath(path: string): DomainError {
  return new DomainError("invalid", "fake_workspace_path_invalid", `Not a safe relative path: ${JSON.stringify(path)}.`);
}

/** Applies a script's changes (all checked first: a bad path changes nothing). */
export function applyChanges(workspace: FakeWorkspace, changes: Readonly<Record<string, FakeFileChange>>): void {
  for (const path of Object.keys(changes)) if (!isSafeRelativePath(path)) throw badPath(path);
  for (const [path, change] of Object.entries(changes)) {
    if (change === null) {
      for (const key of [...workspace.keys()]) if (key === path || key.startsWith(`${path}/`)) workspace.delete(key);
    } else if (typeof change === "string" || Buffer.isBuffer(change)) {
      workspace.set(path, { kind: "file", content: Buffer.from(change), mode: FILE_MODE });
    } else if ("symlink" in change) {
      workspace.set(path, { kind: "symlink", target: change.symlink });
    } else {
      workspace.set(path, { kind: "directory", mode: DIRECTORY_MODE });
    }
  }
}

/** Every path with implied parent directories made explicit, in export order. */
export function exportOrder(workspace: FakeWorkspace, include: (path: string, entry: FakeEntry) => boolean): [string, FakeEntry][] {
  const all = new Map<string, FakeEntry>();
  for (const [path, entry] of workspace) {
    if (!include(path, entry)) continue;
    all.set(path, entry);
    for (const dir of ancestorsOf(path)) if (!all.has(dir)) all.set(dir, workspace.get(dir) ?? { kind: "directory", mode: DIRECTORY_MODE });
  }
  // Code-unit order of the path puts "a" before "a/b"; but "a-b" < "a/b", so compare by
  // components (what walkWorkspace yields: a directory's contents right after it).
  const byComponents = (a: string, b: string) => {
    const x = a.split("/");
    const y = b.split("/");
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const order = comparePaths(x[i] as string, y[i] as string);
      if (order !== 0) return order;
    }
    return x.length - y.length;
  };
  return [...all.entries()].sort(([a], [b]) => byComponents(a, b));
}

export function workspaceTar(workspace: FakeWorkspace, include: (path: string, entry: FakeEntry) => boolean = () => true): Buffer {
  const blocks: Buffer[] = [];
  for (const [path, entry] of exportOrder(workspace, include)) {
    if (entry.kind === "directory") {
      blocks.push(...encodeHeader({ path: `${path}/`, type: "Directory", mode: entry.mode, size: 0 }));
    } else if (entry.kind === "symlink") {
      blocks.push(...encodeHeader({ path, type: "SymbolicLink", linkpath: entry.target, mode: 0o777, size: 0 }));
    } else {
      blocks.push(...encodeHeader({ path, type: "File", mode: entry.mode, size: entry.content.length, mtime: 0 }));
      blocks.push(entry.content, Buffer.alloc((BLOCK - (entry.content.length % BLOCK)) % BLOCK));
    }
  }
  blocks.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(blocks);
}

export function workspaceTarStream(workspace: FakeWorkspace, include?: (path: string, entry: FakeEntry) => boolean): Readable {
  return Readable.from([workspaceTar(workspace, include)], { objectMode: false });
}

function seedRefused(reason: string): DomainError {
  return new DomainError("invalid", "provider_seed_archive_unsafe", `The seed archive was refused: ${reason}.`);
}

/**
 * Tracks what a seed stream held, for the one archive node-tar refuses although it is valid: an
 * empty workspace's archive, nothing but the end-of-archive marker (two or more zero blocks, as
 * copyback/archive/export.ts writes for an empty directory). Anything else node-tar refuses (no
 * bytes, one zero block, a length off the block size, non-zero garbage) stays refused.
 */
class ZeroBlockTracker {
  bytes = 0;
  allZero = true;

  see(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.allZero) for (const byte of chunk) if (byte !== 0) { this.allZero = false; break; }
  }

  /** Only end-of-archive blocks: at least two whole zero blocks and nothing else. */
  get endOfArchiveOnly(): boolean {
    return this.allZero && this.bytes >= 2 * BLOCK && this.bytes % BLOCK === 0;
  }
}

/** Parses a tar stream into a workspace; only files, directories and links at safe paths. */
export async function readWorkspaceTar(archive: Readable): Promise<FakeWorkspace> {
  const workspace: FakeWorkspace = new Map();
  const problems: string[] = [];
  let entries = 0;
  const seen = new ZeroBlockTracker();
  const parser = new Parser({ strict: true, brotli: false, zstd: false });
  parser.on("entry", (entry: ReadEntry) => {
    entries += 1;
    const path = entry.path.replace(/\/+$/, "");
    const chunks: Buffer[] = [];
    entry.on("data", (chunk: Buffer) => chunks.push(chunk));
    entry.on("end", () => {
      if (!isSafeRelativePath(path)) problems.push(`unsafe path ${JSON.stringify(entry.path)}`);
      else if (entry.type === "Directory") workspace.set(path, { kind: "directory", mode: (entry.mode ?? DIRECTORY_MODE) & 0o777 });
      else if (entry.type === "File" || entry.type === "OldFile")
        workspace.set(path, { kind: "file", content: Buffer.concat(chunks), mode: (entry.mode ?? FILE_MODE) & 0o777 });
      else if (entry.type === "SymbolicLink") workspace.set(path, { kind: "symlink", target: entry.linkpath ?? "" });
      else problems.push(`unsupported entry type ${entry.type}`);
    });
  });
  parser.on("error", (error: Error) => problems.push(error.message));
  const ended = new Promise<void>((resolve) => parser.once("end", () => resolve()));
  for await (const chunk of archive) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    seen.see(bytes);
    parser.write(bytes);
  }
  parser.end();
  await ended;
  // An empty workspace's archive: node-tar calls it an unrecognized format; it seeds nothing.
  if (entries === 0 && seen.endOfArchiveOnly) return workspace;
  if (problems.length > 0) throw seedRefused(problems[0] as string);
  return workspace;
}
