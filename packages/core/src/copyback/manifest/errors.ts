// Errors of the manifest layer. Messages carry only root-relative paths, never a host
// absolute path (R-UA-4): these errors can end up in a task's run log.
import path from "node:path";

export type ManifestErrorCode =
  "invalid_manifest" | "invalid_exclude" | "unsupported_entry" | "manifest_root_invalid";

export class ManifestError extends Error {
  override readonly name = "ManifestError";
  constructor(
    readonly code: ManifestErrorCode,
    message: string,
    readonly relativePath?: string,
  ) {
    super(message);
  }
}

/**
 * A filesystem error with its absolute path replaced by a root-relative one. `code` keeps the
 * errno code ("EACCES", "ENOENT", ...) so retry classification still sees it; the original
 * error stays reachable as `cause` for operator logs.
 */
export class CopybackFsError extends Error {
  override readonly name = "CopybackFsError";
  readonly code: string;
  readonly syscall: string | undefined;
  readonly relativePath: string | undefined;
  constructor(cause: NodeJS.ErrnoException, roots: readonly { root: string; label?: string }[]) {
    const code = typeof cause.code === "string" ? cause.code : "EIO";
    const rel = describePath(cause.path, roots);
    super(
      `${cause.syscall ?? "filesystem operation"} failed${rel === undefined ? "" : ` on ${JSON.stringify(rel)}`} (${code})`,
      { cause },
    );
    this.code = code;
    this.syscall = cause.syscall;
    this.relativePath = rel;
  }
}

function describePath(
  abs: string | undefined,
  roots: readonly { root: string; label?: string }[],
): string | undefined {
  if (abs === undefined) return undefined;
  for (const { root, label } of roots) {
    const rel = path.relative(root, abs);
    if (rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel))) {
      const posix = rel === "" ? "." : rel.split(path.sep).join("/");
      return label === undefined ? posix : `${label}:${posix}`;
    }
  }
  return "<outside the workspace>";
}

/** Wraps errno errors (anything with a string `code` and a `syscall`); passes others through. */
export function sanitizeFsError(
  error: unknown,
  roots: readonly { root: string; label?: string }[],
): unknown {
  if (error instanceof CopybackFsError || error instanceof ManifestError) return error;
  if (error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === "string") {
    return new CopybackFsError(error as NodeJS.ErrnoException, roots);
  }
  return error;
}
