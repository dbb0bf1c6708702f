// Plumbing of the CLI tests: the CLI run in-process (stdout/stderr captured) or as the real bin
// in a child process, temporary directories, small workspaces, tar archives made with GNU tar,
// and a process that holds a target's lock.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  readlink,
  rm,
  writeFile,
} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../../src/cli/main";

export const CORE_DIR = fileURLToPath(new URL("../..", import.meta.url));
export const BIN = path.join(CORE_DIR, "bin", "copyback.mjs");
const HOLDER = fileURLToPath(new URL("./fixtures/hold-lock.ts", import.meta.url));

/** The userHome the in-process runs see: ~/.copyback resolves below it, never to the real one. */
export const NO_USER_HOME = path.join(os.tmpdir(), "copyback-cli-no-home");

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** main() in this process; the environment is fixed so no test reads the real ~/.copyback. */
export async function runCli(
  argv: string[],
  opts: {
    copybackHome?: string;
    /** DATABASE_URL as the recovery commands read it; unset: the instance root's embedded one. */
    databaseUrl?: string;
    embeddedPort?: string;
    onStderr?: (text: string) => void;
  } = {},
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => {
      stderr += t;
      opts.onStderr?.(t);
    },
    env: {
      copybackHome: opts.copybackHome,
      userHome: NO_USER_HOME,
      databaseUrl: opts.databaseUrl,
      embeddedPort: opts.embeddedPort,
    },
  });
  return { code, stdout, stderr };
}

/** The real bin (`node packages/core/bin/copyback.mjs`), as an operator runs it. */
export function spawnCli(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...argv], {
      cwd: CORE_DIR,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const made: string[] = [];

/** A TCP port on 127.0.0.1 that was free a moment ago (for an embedded server). */
export async function freePort(): Promise<number> {
  const net = await import("node:net");
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export async function tempDir(label: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `copyback-cli-${label}-`));
  made.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  for (const dir of made.splice(0)) {
    await chmodTree(dir).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

async function chmodTree(dir: string): Promise<void> {
  await chmod(dir, 0o700);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await chmodTree(path.join(dir, entry.name));
  }
}

/** Writes files (path -> contents); parents are created. */
export async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, contents] of Object.entries(files)) {
    const abs = path.join(root, rel);
    await mkdir(path.dirname(abs), { recursive: true });
    await writeFile(abs, contents);
  }
}

/** Every entry below root: type, mode, content hash or link target (for "nothing changed"). */
export async function snapshotTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const name of (await readdir(dir)).sort()) {
      const abs = path.join(dir, name);
      const p = rel ? `${rel}/${name}` : name;
      const st = await lstat(abs);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[p] = `link ${await readlink(abs)}`;
      else if (st.isDirectory()) {
        out[p] = `dir ${mode}`;
        await walk(abs, p);
      } else
        out[p] = `file ${mode} ${createHash("sha256")
          .update(await readFile(abs))
          .digest("hex")}`;
    }
  };
  await walk(root, "");
  return out;
}

/** GNU tar of a directory's contents (`tar -C dir -cf file .`), extra flags allowed. */
export function tarDirectory(dir: string, file: string, extra: string[] = []): void {
  execFileSync("tar", ["-C", dir, ...extra, "-cf", file, "."]);
}

/**
 * An archive a sandbox must never get extracted: a `..` traversal entry, a symlink to an
 * absolute host path and a hard link.
 */
export async function hostileArchive(work: string): Promise<string> {
  const src = path.join(work, "hostile-src");
  await writeTree(src, { "ok.txt": "fine\n", "evil.txt": "escape\n", "twin-a.txt": "same\n" });
  execFileSync("ln", [path.join(src, "twin-a.txt"), path.join(src, "twin-b.txt")]);
  execFileSync("ln", ["-s", "/etc/passwd", path.join(src, "passwd-link")]);
  const file = path.join(work, "hostile.tar");
  // GNU tar's --transform renames evil.txt to ../evil.txt inside the archive.
  execFileSync("tar", [
    "-C",
    src,
    "--transform",
    "s,^\\./evil\\.txt$,../evil.txt,",
    "-cf",
    file,
    ".",
  ]);
  return file;
}

export interface LockHolder {
  pid: number;
  release(): Promise<void>;
}

/** Another process holding `target`'s directory-merge lock until release(). */
export async function holdLock(instanceRoot: string, target: string): Promise<LockHolder> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", HOLDER, instanceRoot, target],
    {
      cwd: CORE_DIR,
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const pid = await new Promise<number>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error("the lock holder did not start")), 20_000);
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /held (\d+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.on("exit", () => reject(new Error("the lock holder exited early")));
  });
  return {
    pid,
    release: async () => {
      child.stdin?.end();
      await exited;
    },
  };
}

export function parseJson(run: CliRun): Record<string, unknown> {
  return JSON.parse(run.stdout) as Record<string, unknown>;
}
