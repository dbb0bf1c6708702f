// Where does a relative symlink end up? Resolved component by component the way the kernel does
// it (a link met on the way is expanded before a following ".." applies), but against a lookup
// instead of the host: the validator looks into the archive's own links, the salvage export into
// the workspace with lstat/readlink only. Pure apart from the injected lookup.
import { isAbsoluteTarget } from "./entry-path";

/** What sits at a path: a symlink (with its target), something else, or nothing. */
export type LinkLookup =
  { kind: "symlink"; target: string } | { kind: "other" } | { kind: "missing" };

export type LinkResolution =
  | { kind: "inside"; components: string[] }
  | { kind: "escape" }
  | { kind: "absolute" }
  | { kind: "loop" }
  | { kind: "missing" };

/** Linux gives up after 40 links in one lookup (ELOOP); so do we. */
export const MAX_LINK_HOPS = 40;

/**
 * Resolves `target`, written in a link whose parent directory is `parent` (components relative
 * to the workspace root). Any step above the root is an escape, even if a later ".." would come
 * back: on the host the parent of the workspace is someone else's directory.
 */
export async function resolveLinkTarget(
  parent: readonly string[],
  target: string,
  lookup: (components: readonly string[]) => LinkLookup | Promise<LinkLookup>,
): Promise<LinkResolution> {
  if (isAbsoluteTarget(target)) return { kind: "absolute" };
  const at: string[] = [...parent];
  // Components still to walk, last one on top.
  const pending = target.split("/").reverse();
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.pop() as string;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (at.length === 0) return { kind: "escape" };
      at.pop();
      continue;
    }
    at.push(part);
    const found = await lookup(at);
    if (found.kind === "missing") return { kind: "missing" };
    if (found.kind === "symlink") {
      if (++hops > MAX_LINK_HOPS) return { kind: "loop" };
      at.pop();
      // An absolute link met on the way leaves the workspace whatever follows.
      if (isAbsoluteTarget(found.target)) return { kind: "escape" };
      for (const next of found.target.split("/").reverse()) pending.push(next);
    }
  }
  return { kind: "inside", components: at };
}
