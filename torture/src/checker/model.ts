// The checker's model of a run's directory: the exact entries each committed run must leave,
// replayed from plan.mjs in commit order (the same function the agent ran in its sandbox).
import { createHash } from "node:crypto";
import { fileContent, planOps } from "../../agent/plan.mjs";

export type ModelEntry = { kind: "file"; sha256: string; token: string } | { kind: "symlink"; target: string };
export type DirModel = Map<string, ModelEntry>;

type Op = { op: "write"; name: string; size: number } | { op: "delete"; name: string } | { op: "rename"; from: string; to: string } | { op: "symlink"; name: string; target: string };

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const hashCache = new Map<string, string>();

export function contentHash(runId: string, path: string, size: number): string {
  const key = `${runId}\0${path}\0${size}`;
  let hash = hashCache.get(key);
  if (!hash) {
    hash = sha((fileContent as (r: string, p: string, s: number) => Buffer)(runId, path, size));
    hashCache.set(key, hash);
  }
  return hash;
}

/** Applies a committed local run to the model (salvaged exports leave the absolute link out, which the plan never adds to the model anyway). */
export function applyLocalRun(model: DirModel, dir: string, runId: string): void {
  const listing = [...model.entries()].map(([name, e]) => ({ name, kind: e.kind })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const op of (planOps as (r: string, l: unknown) => Op[])(runId, listing)) {
    if (op.op === "write") model.set(op.name, { kind: "file", sha256: contentHash(runId, `${dir}/${op.name}`, op.size), token: runId });
    else if (op.op === "delete") model.delete(op.name);
    else if (op.op === "rename") {
      const entry = model.get(op.from);
      model.delete(op.from);
      if (entry) model.set(op.to, entry);
    } else model.set(op.name, { kind: "symlink", target: op.target });
  }
}

/** The fake provider's scripted turn: one file named after the run. */
export function fakeFileName(runId: string): string {
  return `fake-${runId}.txt`;
}

export function applyFakeRun(model: DirModel, dir: string, runId: string): void {
  const name = fakeFileName(runId);
  model.set(name, { kind: "file", sha256: contentHash(runId, `${dir}/${name}`, 0), token: runId });
}

/**
 * The workspace paths a committed run's copyback may write: what its replay changes in its own
 * directory (new or changed entries; a rename's target), and the directories above it (created
 * with its first file). Anything else in its `changes.written` is a file its own agent did not
 * write (provenance).
 */
export function pathsRunMayWrite(before: DirModel, after: DirModel, dir: string): Set<string> {
  const out = new Set<string>();
  const parts = dir.split("/");
  for (let i = 1; i <= parts.length; i++) out.add(parts.slice(0, i).join("/"));
  for (const [name, entry] of after) {
    const prior = before.get(name);
    const same = prior !== undefined && JSON.stringify(prior) === JSON.stringify(entry);
    if (!same) out.add(`${dir}/${name}`);
  }
  return out;
}
