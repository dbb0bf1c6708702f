// Relative POSIX path helpers shared by manifests and the merge. Manifest paths never start
// with "/" or "./", never end with "/", and never contain "." or ".." segments.

/** Plain code-unit order: the one deterministic order of manifest entries. */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** "" for a top-level entry (the root itself has no manifest entry). */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

export function joinRelative(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}

/** Proper ancestors, nearest first ("a/b/c" -> ["a/b", "a"]). */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  for (let p = parentOf(path); p !== ""; p = parentOf(p)) out.push(p);
  return out;
}

export function depthOf(path: string): number {
  let depth = 1;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47 /* "/" */) depth++;
  return depth;
}

/** A normalized relative path: what a manifest may hold and what the merge may write. */
export function isSafeRelativePath(path: string): boolean {
  if (path === "" || path.startsWith("/") || path.endsWith("/") || path.includes("\0"))
    return false;
  return path.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..");
}
