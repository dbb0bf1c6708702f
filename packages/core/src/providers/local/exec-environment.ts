// What the agent's process gets: a clean, minimal environment and a working directory that
// cannot leave the workspace.
import { lstat } from "node:fs/promises";
import { join, posix } from "node:path";
import { DomainError } from "../../errors";
import type { ExecRequest } from "../types";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const RESULT_FILE_VARIABLE = "COPYBACK_RESULT_FILE";

function invalidRequest(code: string, message: string): DomainError {
  return new DomainError("invalid", code, message);
}

/** Pure: refuses requests that could not be run as given (checked before anything starts). */
export function checkExecRequest(request: ExecRequest): void {
  if (request.argv.length === 0 || request.argv.some((arg) => typeof arg !== "string" || arg.includes("\0")) || request.argv[0] === "") {
    throw invalidRequest("exec_argv_invalid", "The command must be a non-empty argv without NUL bytes.");
  }
  for (const [name, value] of Object.entries(request.env)) {
    if (!ENV_NAME.test(name) || typeof value !== "string" || value.includes("\0")) {
      throw invalidRequest("exec_env_invalid", `Not a usable environment variable: ${JSON.stringify(name)}.`);
    }
  }
  if (!Number.isFinite(request.timeoutMs) || request.timeoutMs <= 0) {
    throw invalidRequest("exec_timeout_invalid", "The timeout must be a positive number of milliseconds.");
  }
}

/**
 * Pure: PATH, HOME (the workspace) and LANG, then the request's variables, then the result file
 * path, which the provider alone decides. Nothing else of the controller's environment leaks in.
 */
export function agentEnvironment(opts: { path: string; workspace: string; resultFile: string; extra: Readonly<Record<string, string>> }): Record<string, string> {
  return { PATH: opts.path, HOME: opts.workspace, LANG: "C.UTF-8", ...opts.extra, [RESULT_FILE_VARIABLE]: opts.resultFile };
}

/** Pure: the cwd's path components below the workspace, or null when it would escape it. */
export function cwdComponents(cwd: string | undefined): string[] | null {
  if (cwd === undefined || cwd === "" || cwd === ".") return [];
  if (cwd.includes("\0") || posix.isAbsolute(cwd)) return null;
  const normalized = posix.normalize(cwd);
  if (normalized === ".." || normalized.startsWith("../")) return null;
  return normalized.split("/").filter((part) => part !== "" && part !== ".");
}

/** The absolute cwd: inside the workspace, through real directories only (never a link out). */
export async function resolveCwd(workspace: string, cwd: string | undefined): Promise<string> {
  const components = cwdComponents(cwd);
  if (components === null) throw invalidRequest("exec_cwd_invalid", `The working directory ${JSON.stringify(cwd)} is outside the workspace.`);
  let path = workspace;
  for (const part of components) {
    path = join(path, part);
    const stats = await lstat(path).catch(() => null);
    if (!stats?.isDirectory()) {
      throw invalidRequest("exec_cwd_invalid", `The working directory ${JSON.stringify(cwd)} is not a directory in the workspace.`);
    }
  }
  return path;
}
