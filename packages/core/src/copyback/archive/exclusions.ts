// Which workspace paths an export leaves out (node_modules, .git internals, ...). Excluded trees
// are neither exported nor, by the merge, deleted on the host: they stay the host's.
//
// A pattern without a slash names a file or directory at any depth ("node_modules"); a pattern
// with one is a path from the workspace root ("vendor/cache"). Either excludes the whole tree
// below what it matches. No globbing.

export type ExclusionMatcher = (relativePath: string, name: string) => boolean;

export function compileExclusions(patterns: readonly string[] = []): ExclusionMatcher {
  const names = new Set<string>();
  const paths = new Set<string>();
  for (const pattern of patterns) {
    const clean = pattern.replace(/^(\.\/)+/, "").replace(/\/+$/, "");
    const parts = clean.split("/");
    if (
      clean === "" ||
      clean.startsWith("/") ||
      clean.includes("\0") ||
      parts.some((p) => p === "" || p === "." || p === "..")
    ) {
      throw new TypeError(`invalid exclude pattern: ${JSON.stringify(pattern)}`);
    }
    if (parts.length === 1) names.add(clean);
    else paths.add(clean);
  }
  if (names.size === 0 && paths.size === 0) return () => false;
  return (relativePath, name) => names.has(name) || paths.has(relativePath);
}
