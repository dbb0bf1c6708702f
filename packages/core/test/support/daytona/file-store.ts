// Real files for each sandbox: one directory per sandbox under the root the test gives.
// A sandbox path (absolute or relative to the work dir) maps inside that directory and
// can never escape it, so a test can read what the SDK uploaded straight from disk.
import { promises as fs } from "node:fs";
import * as path from "node:path";

export class SandboxPathError extends Error {}

export function sandboxDir(root: string, sandboxId: string): string {
  return path.join(root, sandboxId);
}

/** The host path of `sandboxPath` inside the sandbox directory `dir`. */
export function resolveInSandbox(dir: string, sandboxPath: string): string {
  if (typeof sandboxPath !== "string" || sandboxPath.length === 0) throw new SandboxPathError("path is required");
  if (sandboxPath.includes("\0")) throw new SandboxPathError("path contains a NUL byte");
  const relative = path.posix.normalize(sandboxPath.replace(/^\/+/, ""));
  if (relative === ".." || relative.startsWith("../")) throw new SandboxPathError(`path escapes the sandbox: ${sandboxPath}`);
  return path.join(dir, relative);
}

export interface FileInfoDto {
  name: string;
  path: string;
  isDir: boolean;
  size: number;
  mode: string;
  permissions: string;
  modTime: string;
  modifiedAt: string;
  owner: string;
  group: string;
}

export async function fileInfo(hostPath: string, sandboxPath: string): Promise<FileInfoDto> {
  const stat = await fs.lstat(hostPath);
  const modTime = stat.mtime.toISOString();
  return {
    name: path.basename(hostPath),
    path: sandboxPath,
    isDir: stat.isDirectory(),
    size: stat.size,
    mode: modeString(stat.mode, stat.isDirectory()),
    permissions: `0${(stat.mode & 0o777).toString(8)}`,
    modTime,
    modifiedAt: modTime,
    owner: "daytona",
    group: "daytona",
  };
}

function modeString(mode: number, isDir: boolean): string {
  const bits = "rwxrwxrwx";
  let out = isDir ? "d" : "-";
  for (let i = 0; i < 9; i++) out += mode & (1 << (8 - i)) ? bits[i] : "-";
  return out;
}
