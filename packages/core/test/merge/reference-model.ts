// The specified three-way outcome, as a pure function over whole trees. Written apart from the
// implementation (which reads only part of the host and builds an operation plan) so that the
// property test compares two formulations of the same rule:
//   per path: sandbox unchanged -> host state; host unchanged -> sandbox state; both changed
//   alike -> that state; both changed differently -> conflict. Excluded host entries stay, with
//   the directories holding them. The result must be a tree (every parent a directory), or the
//   merge is a conflict. A snapshot equal to the baseline is "unchanged" and the host untouched.
import type { TreeState } from "./helpers";

export type ModelNode = TreeState[string];
export type ModelResult =
  | { kind: "conflict" }
  | { kind: "unchanged" }
  | { kind: "applied"; tree: TreeState; written: string[]; deleted: string[] };

export function sameNode(x: ModelNode | undefined, y: ModelNode | undefined): boolean {
  if (x === undefined || y === undefined) return x === y;
  if (x.type !== y.type) return false;
  if (x.type === "file" && y.type === "file") return x.mode === y.mode && x.content === y.content;
  if (x.type === "dir" && y.type === "dir") return x.mode === y.mode;
  if (x.type === "symlink" && y.type === "symlink") return x.target === y.target;
  return false;
}

const parent = (p: string): string => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");

export function expectedMerge(
  base: TreeState,
  sandbox: TreeState,
  host: TreeState,
  isExcluded: (p: string) => boolean,
): ModelResult {
  const keep = (tree: TreeState) =>
    Object.fromEntries(Object.entries(tree).filter(([p]) => !isExcluded(p)));
  const B = keep(base);
  const S = keep(sandbox);
  const H = keep(host);
  const excludedOnHost = Object.keys(host).filter(isExcluded);

  const keysB = Object.keys(B).sort();
  const keysS = Object.keys(S).sort();
  if (
    keysB.length === keysS.length &&
    keysB.every((p, i) => p === keysS[i] && sameNode(B[p], S[p]))
  )
    return { kind: "unchanged" };

  const F: Record<string, ModelNode | undefined> = {};
  for (const p of new Set([...Object.keys(B), ...Object.keys(S), ...Object.keys(H)])) {
    const [b, s, h] = [B[p], S[p], H[p]];
    if (sameNode(b, s)) F[p] = h;
    else if (sameNode(b, h)) F[p] = s;
    else if (sameNode(h, s)) F[p] = s;
    else return { kind: "conflict" };
  }

  for (const e of excludedOnHost) {
    // The excluded entry's topmost excluded ancestor (itself when no ancestor is excluded).
    let top = e;
    while (parent(top) !== "" && isExcluded(parent(top))) top = parent(top);
    for (let a = parent(top); a !== ""; a = parent(a)) {
      const f = F[a];
      if (f?.type === "dir") break;
      if (f === undefined && H[a]?.type === "dir") {
        F[a] = H[a];
        continue;
      }
      return { kind: "conflict" };
    }
  }

  for (const [p, node] of Object.entries(F)) {
    if (node === undefined || parent(p) === "") continue;
    if (F[parent(p)]?.type !== "dir") return { kind: "conflict" };
  }

  const tree: TreeState = {};
  for (const [p, node] of Object.entries(F)) if (node !== undefined) tree[p] = node;
  for (const e of excludedOnHost) tree[e] = host[e]!;
  const written = Object.keys(tree)
    .filter((p) => !isExcluded(p) && !sameNode(tree[p], H[p]))
    .sort();
  const deleted = Object.keys(H)
    .filter((p) => tree[p] === undefined)
    .sort();
  return { kind: "applied", tree: sortTree(tree), written, deleted };
}

export function sortTree(tree: TreeState): TreeState {
  return Object.fromEntries(Object.entries(tree).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
