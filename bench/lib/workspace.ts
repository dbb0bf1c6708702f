// A synthetic workspace like the benchmark asks for: 10,000 regular files totalling
// 200 MiB, mixed sizes (many small sources, some medium assets, a few large blobs), in a nested
// tree of ~520 directories, plus a few relative symlinks. Layout and sizes come from a seeded
// PRNG (same shape every run); contents are random bytes (incompressible, unique).
import { randomBytes } from "node:crypto";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";

export interface WorkspaceSpec {
  files: number;
  totalBytes: number;
  seed: number;
}

export const DEFAULT_WORKSPACE: WorkspaceSpec = {
  files: 10_000,
  totalBytes: 200 * 1024 * 1024,
  seed: 42,
};

export interface GeneratedWorkspace {
  root: string;
  files: { path: string; size: number }[];
  directories: string[];
  symlinks: number;
  totalBytes: number;
}

/** mulberry32: a tiny deterministic PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function planWorkspace(spec: WorkspaceSpec): {
  files: { path: string; size: number }[];
  directories: string[];
} {
  const rand = prng(spec.seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const directories: string[] = [];
  for (let a = 0; a < 20; a++) {
    const top = `pkg${String(a).padStart(2, "0")}`;
    directories.push(top);
    for (let b = 0; b < 5; b++) {
      const mid = `${top}/mod${b}`;
      directories.push(mid);
      for (let c = 0; c < 4; c++) directories.push(`${mid}/part${c}`);
    }
  }
  const small = Math.round(spec.files * 0.85);
  const large = Math.max(1, Math.round(spec.files * 0.005));
  const medium = spec.files - small - large;
  const sizes: number[] = [];
  for (let i = 0; i < small; i++) sizes.push(int(256, 8 * 1024));
  for (let i = 0; i < large; i++) sizes.push(int(1024 * 1024, 2 * 1024 * 1024));
  const fixed = sizes.reduce((s, x) => s + x, 0);
  const weights = Array.from({ length: medium }, () => 0.2 + rand());
  const sum = weights.reduce((s, x) => s + x, 0);
  const remaining = spec.totalBytes - fixed;
  // The small and large files alone take `fixed` bytes (about 1.3 MiB per 100 files); a smaller
  // total would hand the medium files negative sizes.
  if (remaining < medium) {
    throw new Error(`${spec.files} files need more than ${Math.ceil(fixed / (1024 * 1024))} MiB (asked: ${(spec.totalBytes / (1024 * 1024)).toFixed(1)} MiB): raise --mib or lower --files`);
  }
  let given = 0;
  weights.forEach((w, i) => {
    const size = i === medium - 1 ? remaining - given : Math.floor((remaining * w) / sum);
    sizes.push(size);
    given += size;
  });
  // Shuffle sizes into random directories (including the root).
  const files = sizes.map((size, i) => {
    const dir = rand() < 0.02 ? "" : (directories[int(0, directories.length - 1)] as string);
    const ext = size > 1024 * 1024 ? "bin" : size > 8 * 1024 ? "dat" : "ts";
    return {
      path: dir
        ? `${dir}/f${String(i).padStart(5, "0")}.${ext}`
        : `f${String(i).padStart(5, "0")}.${ext}`,
      size,
    };
  });
  return { files, directories };
}

export async function generateWorkspace(
  root: string,
  spec: WorkspaceSpec = DEFAULT_WORKSPACE,
): Promise<GeneratedWorkspace> {
  const { files, directories } = planWorkspace(spec);
  await mkdir(root, { recursive: true });
  for (const dir of directories) await mkdir(path.join(root, dir), { recursive: true });
  await forEachLimited(files, 32, (f) => writeFile(path.join(root, f.path), randomBytes(f.size)));
  let symlinks = 0;
  for (let i = 0; i < 20; i++) {
    const dir = directories[i * 25] as string;
    const target = files.find((f) => f.path.startsWith(`${dir}/`));
    if (!target) continue;
    await symlink(path.basename(target.path), path.join(root, dir, `link${i}`));
    symlinks++;
  }
  return { root, files, directories, symlinks, totalBytes: files.reduce((s, f) => s + f.size, 0) };
}

export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
