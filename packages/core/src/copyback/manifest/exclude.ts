// Excluded trees (for example node_modules or .git): never listed in a manifest, never
// descended into, never deleted by a merge (preserved on the host).
//
// A pattern without "/" names a path component at any depth ("node_modules" excludes every
// node_modules entry and what is below it). A pattern with "/" (or a leading "./") is a
// root-relative path that is excluded with everything below it (".git/objects", "./build").
// No globbing: exclusions must be predictable for a reviewer reading the configuration.
import { ManifestError } from "./errors";
import { isSafeRelativePath } from "./paths";

export type ExcludeMatcher = (relativePath: string) => boolean;

export function compileExclude(patterns: readonly string[] = []): ExcludeMatcher {
  const names = new Set<string>();
  const prefixes: string[] = [];
  for (const raw of patterns) {
    const pattern = raw.replace(/^\.\//, "").replace(/\/+$/, "");
    if (!isSafeRelativePath(pattern)) {
      throw new ManifestError(
        "invalid_exclude",
        `Invalid exclusion ${JSON.stringify(raw)}: expected a name or a relative path without "." or ".." segments`,
      );
    }
    if (pattern.includes("/") || raw.startsWith("./")) prefixes.push(pattern);
    else names.add(pattern);
  }
  if (names.size === 0 && prefixes.length === 0) return () => false;
  return (relativePath) => {
    for (const prefix of prefixes) {
      if (relativePath === prefix || relativePath.startsWith(`${prefix}/`)) return true;
    }
    if (names.size === 0) return false;
    for (const segment of relativePath.split("/")) if (names.has(segment)) return true;
    return false;
  };
}
