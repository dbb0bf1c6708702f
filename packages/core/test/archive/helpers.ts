// Test helpers: temporary directories under os.tmpdir() and a byte-exact description of a tree.
import { lstat, mkdtemp, readFile, readdir, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWriteStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { createHash } from "node:crypto";

export async function tempDir(label: string): Promise<{ path: string; cleanup(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `copyback-archive-${label}-`));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

export interface TreeRecord {
  type: "file" | "directory" | "symlink" | "other";
  mode: number;
  sha256?: string;
  target?: string;
}

/** Every entry below `root` (lstat only), with content hashes and link targets. */
export async function describeTree(
  root: string,
  opts: { mtimes?: boolean } = {},
): Promise<Record<string, TreeRecord & { mtimeMs?: number }>> {
  const out: Record<string, TreeRecord & { mtimeMs?: number }> = {};
  const walk = async (dir: string, rel: string) => {
    for (const name of (await readdir(dir)).sort()) {
      const abs = join(dir, name);
      const path = rel ? `${rel}/${name}` : name;
      const st = await lstat(abs);
      const record: TreeRecord & { mtimeMs?: number } = {
        type: st.isFile()
          ? "file"
          : st.isDirectory()
            ? "directory"
            : st.isSymbolicLink()
              ? "symlink"
              : "other",
        mode: st.mode & 0o7777,
      };
      if (opts.mtimes) record.mtimeMs = st.mtimeMs;
      if (st.isFile())
        record.sha256 = createHash("sha256")
          .update(await readFile(abs))
          .digest("hex");
      if (st.isSymbolicLink()) {
        record.target = await readlink(abs);
        record.mode = 0;
      }
      out[path] = record;
      if (st.isDirectory()) await walk(abs, path);
    }
  };
  await walk(root, "");
  return out;
}

export async function writeStream(stream: NodeJS.ReadableStream, file: string): Promise<void> {
  await pipeline(stream, createWriteStream(file));
}
