// The instance root (`--home`, COPYBACK_HOME, ~/.copyback): where it is, what state it is in,
// and the private staging area below it where `merge` extracts archives.
import { randomBytes } from "node:crypto";
import { chmod, lstat, mkdir, readdir, realpath, rm, stat } from "node:fs/promises";
import path from "node:path";
import { SERVER_TRAVERSE_BIT } from "@copyback/db";
import type { CliEnv } from "./env";
import { CliError } from "./errors";
import { EXIT } from "./exit-codes";

export const STAGING_RELATIVE = "staging";

export function resolveInstanceRoot(flag: string | undefined, env: CliEnv): string {
  return path.resolve(flag ?? env.copybackHome ?? path.join(env.userHome, ".copyback"));
}

export interface InstanceRootState {
  path: string;
  /** missing | directory | symlink-to-directory | not-directory */
  kind: "missing" | "directory" | "symlink_to_directory" | "not_directory";
  realPath: string | null;
  /** Permission bits of the (resolved) directory. */
  mode: number | null;
  /** No access at all for group and others. */
  private: boolean;
  /** Writable by group or others: anyone could swap its contents. */
  groupOrOtherWritable: boolean;
  ownedByCurrentUser: boolean | null;
  /**
   * Private but for exactly the traverse bit the embedded PostgreSQL's launcher sets for its
   * server account (SERVER_TRAVERSE_BIT), on a root whose cluster lives in place (postgres/data a
   * real directory): others may enter it by name, never list or write it.
   */
  serverTraverseOnly: boolean;
}

export async function inspectInstanceRoot(root: string): Promise<InstanceRootState> {
  const state: InstanceRootState = {
    path: root,
    kind: "missing",
    realPath: null,
    mode: null,
    private: false,
    groupOrOtherWritable: false,
    ownedByCurrentUser: null,
    serverTraverseOnly: false,
  };
  let link;
  try {
    link = await lstat(root);
  } catch (error) {
    if (errno(error) === "ENOENT") return state;
    throw error;
  }
  let st = link;
  if (link.isSymbolicLink()) {
    try {
      st = await stat(root);
    } catch {
      state.kind = "not_directory";
      return state;
    }
  }
  if (!st.isDirectory()) {
    state.kind = "not_directory";
    return state;
  }
  state.kind = link.isSymbolicLink() ? "symlink_to_directory" : "directory";
  state.realPath = await realpath(root);
  state.mode = st.mode & 0o777;
  state.private = (st.mode & 0o077) === 0;
  state.groupOrOtherWritable = (st.mode & 0o022) !== 0;
  state.ownedByCurrentUser =
    typeof process.getuid === "function" ? st.uid === process.getuid() : null;
  state.serverTraverseOnly =
    (st.mode & 0o077) === SERVER_TRAVERSE_BIT &&
    (await lstat(path.join(root, "postgres", "data")).then(
      (data) => data.isDirectory(),
      () => false,
    ));
  return state;
}

/** The instance root for a command that writes (merge): created private when missing. */
export async function ensureInstanceRoot(root: string): Promise<string> {
  let state = await inspectInstanceRoot(root);
  if (state.kind === "missing") {
    await mkdir(root, { recursive: true, mode: 0o700 });
    await chmod(root, 0o700); // mkdir's mode is filtered by the umask
    state = await inspectInstanceRoot(root);
  }
  if (state.kind === "not_directory" || state.realPath === null) {
    throw new CliError(
      EXIT.environment,
      "instance_root_invalid",
      `The instance root ${root} is not a directory.`,
    );
  }
  if (state.groupOrOtherWritable) {
    throw new CliError(
      EXIT.environment,
      "instance_root_insecure",
      `The instance root ${root} is writable by group or others (mode ${octal(state.mode)}); make it private: chmod 700 ${root}`,
    );
  }
  return state.realPath;
}

/**
 * A fresh private directory `<root>/staging/<name>` for one extraction. The staging parent is
 * refused if it is a symlink or not private: an archive's files must not land where another
 * user could read or swap them before the merge.
 */
export async function createStagingDir(rootReal: string, label: string): Promise<string> {
  const parent = path.join(rootReal, STAGING_RELATIVE);
  try {
    await mkdir(parent, { mode: 0o700 });
    await chmod(parent, 0o700);
  } catch (error) {
    if (errno(error) !== "EEXIST") throw error;
  }
  const st = await lstat(parent);
  if (st.isSymbolicLink() || !st.isDirectory() || (st.mode & 0o077) !== 0) {
    throw new CliError(
      EXIT.environment,
      "staging_insecure",
      `The staging directory ${parent} must be a private real directory (chmod 700, not a symlink).`,
    );
  }
  const dir = path.join(parent, `${label}-${process.pid}-${randomBytes(6).toString("hex")}`);
  await mkdir(dir, { mode: 0o700 });
  return dir;
}

/** Leftover staging directories (from a merge that was killed). */
export async function listStaging(rootReal: string): Promise<string[]> {
  try {
    return (await readdir(path.join(rootReal, STAGING_RELATIVE))).sort();
  } catch (error) {
    if (errno(error) === "ENOENT") return [];
    throw error;
  }
}

/**
 * Removes a staging directory. An extracted archive may hold read-only directories, so on
 * EACCES every directory is made writable first. Never follows a link (lstat only).
 */
export async function removeStagingDir(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true });
    return;
  } catch (error) {
    if (errno(error) !== "EACCES" && errno(error) !== "EPERM") throw error;
  }
  await makeWritable(dir);
  await rm(dir, { recursive: true, force: true });
}

async function makeWritable(dir: string): Promise<void> {
  await chmod(dir, 0o700);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await makeWritable(path.join(dir, entry.name));
  }
}

export function octal(mode: number | null): string {
  return mode === null ? "?" : `0${mode.toString(8).padStart(3, "0")}`;
}

function errno(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
