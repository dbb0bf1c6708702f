// Test helpers for the merge: real directories under os.tmpdir(), described as flat path maps.
import { execFileSync } from "node:child_process";
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { takeManifest } from "../../src/copyback/manifest/index";
import type { Manifest } from "../../src/copyback/manifest/index";
import { DirectoryMergeLocks } from "../../src/copyback/locks/index";
import { realFsOps, type FsOps, type MergeLockProvider } from "../../src/copyback/merge/index";

export type Node =
  | { type: "file"; content: string; mode?: number }
  | { type: "dir"; mode?: number }
  | { type: "symlink"; target: string };
export type TreeSpec = Record<string, Node>;

export const file = (content: string, mode = 0o644): Node => ({ type: "file", content, mode });
export const dir = (mode = 0o755): Node => ({ type: "dir", mode });
export const link = (target: string): Node => ({ type: "symlink", target });

/** What a directory holds, read back with lstat: every entry, temporaries and exclusions included. */
export type TreeState = Record<
  string,
  | { type: "file"; mode: number; content: string }
  | { type: "dir"; mode: number }
  | { type: "symlink"; target: string }
>;

const made: string[] = [];

export async function tempDir(label = "merge"): Promise<string> {
  const dirPath = await mkdtemp(path.join(os.tmpdir(), `copyback-${label}-`));
  made.push(dirPath);
  return dirPath;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

/** Creates the tree (missing parents as 0755 directories); directory modes are set last. */
export async function materialize(root: string, spec: TreeSpec): Promise<void> {
  await mkdir(root, { recursive: true });
  const paths = Object.keys(spec).sort(
    (a, b) => a.split("/").length - b.split("/").length || (a < b ? -1 : 1),
  );
  const dirModes: [string, number][] = [];
  for (const rel of paths) {
    const node = spec[rel]!;
    const abs = path.join(root, rel);
    await mkdir(path.dirname(abs), { recursive: true });
    if (node.type === "dir") {
      await mkdir(abs, { recursive: true });
      dirModes.push([abs, node.mode ?? 0o755]);
    } else if (node.type === "file") {
      await writeFile(abs, node.content);
      await chmod(abs, node.mode ?? 0o644);
    } else {
      await symlink(node.target, abs);
    }
  }
  for (const [abs, mode] of dirModes.reverse()) await chmod(abs, mode);
}

export async function readTree(root: string): Promise<TreeState> {
  const out: TreeState = {};
  const visit = async (rel: string): Promise<void> => {
    const names = (await readdir(rel === "" ? root : path.join(root, rel))).sort();
    for (const name of names) {
      const child = rel === "" ? name : `${rel}/${name}`;
      const abs = path.join(root, child);
      const stat = await lstat(abs);
      if (stat.isDirectory()) {
        out[child] = { type: "dir", mode: stat.mode & 0o777 };
        await visit(child);
      } else if (stat.isSymbolicLink()) {
        out[child] = { type: "symlink", target: await readlink(abs) };
      } else {
        out[child] = {
          type: "file",
          mode: stat.mode & 0o777,
          content: await readFile(abs, "utf8"),
        };
      }
    }
  };
  await visit("");
  return out;
}

/** The state a spec describes, in readTree's shape (implicit parents as 0755 directories). */
export function stateOf(spec: TreeSpec): TreeState {
  const out: TreeState = {};
  for (const [rel, node] of Object.entries(spec)) {
    const parts = rel.split("/");
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join("/");
      if (!(parent in spec)) out[parent] ??= { type: "dir", mode: 0o755 };
    }
    out[rel] =
      node.type === "file"
        ? { type: "file", mode: node.mode ?? 0o644, content: node.content }
        : node.type === "dir"
          ? { type: "dir", mode: node.mode ?? 0o755 }
          : { type: "symlink", target: node.target };
  }
  return out;
}

export interface Scenario {
  root: string;
  host: string;
  snapshot: string;
  outside: string;
  baseline: Manifest;
  /** The real directory-merge locks, with their instance root beside the host. */
  locks: DirectoryMergeLocks;
  instanceRoot: string;
}

/** baseline tree -> its manifest; host and snapshot materialized separately; a sibling "outside" dir with a canary. */
export async function scenario(
  base: TreeSpec,
  sandbox: TreeSpec,
  host: TreeSpec,
  exclude: string[] = [],
): Promise<Scenario> {
  const root = await tempDir();
  const baselineDir = path.join(root, "baseline");
  await materialize(baselineDir, base);
  const baseline = await takeManifest(baselineDir, { exclude });
  await materialize(path.join(root, "host"), host);
  await materialize(path.join(root, "snapshot"), sandbox);
  await materialize(path.join(root, "outside"), { canary: file("outside") });
  const instanceRoot = path.join(root, "instance");
  await mkdir(instanceRoot);
  return {
    root,
    host: path.join(root, "host"),
    snapshot: path.join(root, "snapshot"),
    outside: path.join(root, "outside"),
    baseline,
    locks: new DirectoryMergeLocks({ instanceRoot, timeoutMs: 5_000 }),
    instanceRoot,
  };
}

/** A minimal stand-in for DirectoryMergeLocks: serializes per target and records what happened. */
export class FakeLocks implements MergeLockProvider {
  readonly held = new Set<string>();
  readonly events: string[] = [];
  private tails = new Map<string, Promise<unknown>>();
  async withLock<T>(target: string, fn: (lease: { target: string }) => Promise<T>): Promise<T> {
    const previous = this.tails.get(target) ?? Promise.resolve();
    const run = previous
      .catch(() => undefined)
      .then(async () => {
        this.held.add(target);
        this.events.push("acquire");
        try {
          return await fn({ target });
        } finally {
          this.held.delete(target);
          this.events.push("release");
        }
      });
    this.tails.set(target, run);
    return run;
  }
}

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

export function makeFifo(abs: string): void {
  execFileSync("mkfifo", [abs]);
}

/**
 * The real operations without the flushes. Tests of merge outcomes and of process crashes
 * cannot observe durability (only a power cut could), and fsync under a loaded CI disk would
 * dominate their run time; the example tests keep the real barriers.
 */
export const noFlushFsOps: FsOps = {
  ...realFsOps,
  fsyncFile: async () => {},
  fsyncDir: async () => {},
  syncFilesystem: async () => true,
};
