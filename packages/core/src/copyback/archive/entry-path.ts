// Pure policy for one archive path or symlink target (R-UA-2): what a name may contain before
// it is allowed anywhere near a directory. No I/O here.
import type { ArchiveLimits } from "./limits";
import { violation, type ArchiveViolation } from "./violations";

export type PathCheck =
  { ok: true; components: string[] } | { ok: false; violation: ArchiveViolation };

type PathLimits = Pick<ArchiveLimits, "maxPathBytes" | "maxComponentBytes" | "maxPathDepth">;

// A Windows drive prefix ("C:", "c:foo") names a host location on Windows hosts even without a
// slash, so it counts as absolute wherever the archive may be extracted.
const DRIVE_PREFIX = /^[A-Za-z]:/;

/** Shared by entry paths and link targets: characters that change meaning between hosts. */
function characterViolation(raw: string, what: string): ArchiveViolation | undefined {
  if (raw.includes("\0")) return violation("invalid_path", raw, `${what} contains a NUL byte`);
  // A backslash is an ordinary character on Linux but a separator on Windows, where "a\..\..\x"
  // would climb out; node-tar also rewrites it there. Refuse it everywhere.
  if (raw.includes("\\")) return violation("invalid_path", raw, `${what} contains a backslash`);
  return undefined;
}

/**
 * Checks an entry path and returns its normalized components ("./a//b/" -> ["a", "b"]). The
 * archive root itself ("." or "./") yields no components.
 */
export function checkEntryPath(raw: string, limits: PathLimits): PathCheck {
  const bad = characterViolation(raw, "path");
  if (bad) return { ok: false, violation: bad };
  if (raw.startsWith("/") || DRIVE_PREFIX.test(raw)) {
    return { ok: false, violation: violation("absolute_path", raw, "entry path is absolute") };
  }
  if (Buffer.byteLength(raw) > limits.maxPathBytes) {
    return {
      ok: false,
      violation: violation(
        "path_too_long",
        raw,
        `entry path is longer than ${limits.maxPathBytes} bytes`,
      ),
    };
  }
  const components: string[] = [];
  for (const part of raw.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      return {
        ok: false,
        violation: violation("parent_traversal", raw, "entry path contains '..'"),
      };
    }
    if (Buffer.byteLength(part) > limits.maxComponentBytes) {
      return {
        ok: false,
        violation: violation(
          "path_too_long",
          raw,
          `a path component is longer than ${limits.maxComponentBytes} bytes`,
        ),
      };
    }
    components.push(part);
  }
  if (components.length > limits.maxPathDepth) {
    return {
      ok: false,
      violation: violation(
        "path_too_deep",
        raw,
        `entry path is deeper than ${limits.maxPathDepth} levels`,
      ),
    };
  }
  return { ok: true, components };
}

/**
 * Checks a symlink target as text. Whether it stays inside the workspace is decided later, by
 * resolving it through the archive's own links (see symlink-resolution.ts).
 */
export function checkLinkTarget(
  entryPath: string,
  target: string,
  limits: PathLimits,
): ArchiveViolation | undefined {
  const bad = characterViolation(target, "symbolic link target");
  // Reported against the link's own path: the target is never echoed (R-UA-4).
  if (bad) return violation(bad.code, entryPath, bad.detail);
  if (target.startsWith("/") || DRIVE_PREFIX.test(target)) {
    return violation("absolute_symlink", entryPath, "symbolic link target is absolute");
  }
  if (Buffer.byteLength(target) > limits.maxPathBytes) {
    return violation(
      "symlink_target_too_long",
      entryPath,
      `symbolic link target is longer than ${limits.maxPathBytes} bytes`,
    );
  }
  return undefined;
}

/** Checks used on a secondary name (a ustar field hidden behind an extended header). */
export function isPlainlyUnsafePath(raw: string): boolean {
  if (raw.includes("\0") || raw.includes("\\")) return true;
  if (raw.startsWith("/") || DRIVE_PREFIX.test(raw)) return true;
  return raw.split("/").includes("..");
}

export function isAbsoluteTarget(target: string): boolean {
  return target.startsWith("/") || DRIVE_PREFIX.test(target) || target.startsWith("\\");
}
