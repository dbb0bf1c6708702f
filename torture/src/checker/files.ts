// The files: every run directory equals the replay of its committed runs in commit order (lost,
// torn, uncommitted and overwritten files told apart by their tokens), a committed run wrote only
// what its own agent wrote (provenance), and nothing changed outside the run directories. Pure.
import type { FinalState, HostEntry } from "./final-state";
import { applyFakeRun, applyLocalRun, pathsRunMayWrite, type DirModel } from "./model";
import { bump, type ViolationKind } from "./verdict";

export interface FilesContext {
  accepted: ReadonlySet<string>;
  coordinators: ReadonlyMap<string, FinalState["coordinators"][number]>;
  /** Runs with a locked host write observed in the merge trace. */
  wroteUnderLock: ReadonlySet<string>;
  /** An open hold of a cause that applies the run's accepted result. */
  resultHeld: (runId: string) => boolean;
  fakeSandboxLost: (runId: string) => boolean;
  add: (kind: ViolationKind, detail: string, runId?: string) => void;
  relaxed: Record<string, number>;
}

/** Judges the host's files; answers the committed runs in commit order. */
export function checkFiles(final: FinalState, ctx: FilesContext): { committedRuns: { run: FinalState["runs"][number]; at: string }[] } {
  const { accepted, coordinators, wroteUnderLock, resultHeld, fakeSandboxLost, add, relaxed } = ctx;
  const committedRuns = final.runs
    .filter((r) => r.status === "succeeded" && coordinators.get(r.id)?.phase === "committed")
    .map((r) => ({ run: r, at: coordinators.get(r.id)?.committedAt ?? "" }))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const committedIds = new Set(committedRuns.map((c) => c.run.id));
  // A held accepted result whose locked host write was observed may have published part of its
  // files before its worker died (the merge is idempotent: the export-only retry or the attested
  // copyback commits them exactly). Those bytes are in flight, not an uncommitted writer: counted
  // as `held_run_partial_write` while the hold is open. Without an observed locked write, or once
  // the hold is gone, they stay `uncommitted_write`.
  // The same holds for a fake run whose sandbox died with its worker after such a write (the
  // attested copyback then finds no sandbox and retries, `fake_sandbox_lost` above): a real
  // provider's sandbox outlives its controller and the retry would commit those bytes.
  const inFlight = new Set([...accepted].filter((id) => !committedIds.has(id) && wroteUnderLock.has(id) && (resultHeld(id) || fakeSandboxLost(id))));
  const heldInFlight = (kind: ViolationKind, got: HostEntry) => kind === "uncommitted_write" && got.kind === "file" && got.token !== null && inFlight.has(got.token);
  const knownHashes = new Set<string>();
  const slotsByIssue = new Map(final.slots.map((s) => [s.issueId, s]));
  const models = new Map<string, DirModel>();
  for (const { run } of committedRuns) {
    const slot = slotsByIssue.get(run.issueId);
    if (!slot) continue;
    const model = models.get(slot.slot) ?? new Map();
    models.set(slot.slot, model);
    const barrier = final.finalizeOps.find((o) => o.runId === run.id && o.status === "succeeded");
    if (barrier?.omitted) continue;
    const before: DirModel = new Map(model);
    // A Daytona slot's agent is the local one (the same plan), in another kind of sandbox.
    if (slot.kind === "fake") applyFakeRun(model, slot.dir, run.id);
    else applyLocalRun(model, slot.dir, run.id);
    for (const entry of model.values()) if (entry.kind === "file") knownHashes.add(entry.sha256);
    // Provenance: every path this run's copyback wrote is one its own agent wrote, in its
    // own directory. A copyback that exported another run's sandbox (a reused lease) writes that
    // run's files, or the host's newer state of other directories, under this run's name.
    const may = pathsRunMayWrite(before, model, slot.dir);
    const foreign = (barrier?.written ?? []).filter((p) => !may.has(p));
    if (foreign.length > 0) {
      add("provenance", `run ${run.id} (${slot.slot}) committed ${foreign.length} path(s) its own agent did not write: ${foreign.slice(0, 5).join(", ")}${foreign.length > 5 ? ", ..." : ""}`, run.id);
    }
  }
  for (const slot of final.slots) {
    const host = final.host[slot.workspace] ?? {};
    const model = models.get(slot.slot) ?? new Map();
    const prefix = `${slot.dir}/`;
    const actual = new Map<string, HostEntry>();
    for (const [rel, entry] of Object.entries(host)) if (rel.startsWith(prefix) && entry.kind !== "directory") actual.set(rel.slice(prefix.length), entry);
    for (const [name, expected] of model) {
      const got = actual.get(name);
      const where = `${slot.workspace}/${slot.dir}/${name}`;
      if (!got) {
        add("lost_file", `${where}: expected ${expected.kind === "file" ? `the bytes of run ${expected.token}` : `a link to ${expected.target}`}, missing`, expected.kind === "file" ? expected.token : undefined);
        continue;
      }
      if (expected.kind === "symlink") {
        if (got.kind !== "symlink" || got.target !== expected.target) add("committed_overwritten", `${where}: expected a link to ${expected.target}, found ${describe(got)}`);
        continue;
      }
      if (got.kind === "file" && got.sha256 === expected.sha256) continue;
      const kind = classify(got, committedIds, knownHashes);
      if (heldInFlight(kind, got)) bump(relaxed, "held_run_partial_write");
      else add(kind, `${where}: expected the bytes of run ${expected.token}, found ${describe(got)}`, expected.token);
    }
    for (const [name, got] of actual) {
      if (model.has(name)) continue;
      const where = `${slot.workspace}/${slot.dir}/${name}`;
      if (got.kind === "symlink" && got.target.startsWith("/")) add("unsafe_link_on_host", `${where} -> ${got.target}`);
      else {
        const kind = got.kind === "file" ? classifyExtra(got, committedIds) : "unexpected_file";
        if (heldInFlight(kind, got)) bump(relaxed, "held_run_partial_write");
        else add(kind, `${where}: not expected, found ${describe(got)}`);
      }
    }
  }
  // Outside the run directories the host stays as it began.
  for (const [workspace, files] of Object.entries(final.baseline)) {
    const host = final.host[workspace] ?? {};
    const inRunDir = (rel: string) => rel === "t" || rel.startsWith("t/");
    for (const [rel, entry] of Object.entries(files)) {
      if (inRunDir(rel) || entry.kind === "directory") continue;
      const got = host[rel];
      if (!got || describe(got) !== describe(entry)) add("baseline_changed", `${workspace}/${rel}: was ${describe(entry)}, now ${got ? describe(got) : "missing"}`);
    }
    for (const [rel, entry] of Object.entries(host)) {
      if (inRunDir(rel) || entry.kind === "directory" || files[rel]) continue;
      add("unexpected_file", `${workspace}/${rel}: outside any run directory, found ${describe(entry)}`);
    }
  }
  return { committedRuns };
}

function describe(entry: HostEntry): string {
  if (entry.kind === "file") return `file ${entry.sha256.slice(0, 12)}${entry.token ? ` (token ${entry.token})` : " (no token)"}`;
  if (entry.kind === "symlink") return `link -> ${entry.target}`;
  return "directory";
}

function classify(got: HostEntry, committed: Set<string>, known: Set<string>): ViolationKind {
  if (got.kind !== "file") return "committed_overwritten";
  if (got.token && !committed.has(got.token)) return "uncommitted_write";
  if (!known.has(got.sha256)) return "torn_file";
  return "committed_overwritten";
}

function classifyExtra(got: HostEntry, committed: Set<string>): ViolationKind {
  if (got.kind !== "file") return "unexpected_file";
  if (!got.token) return "torn_file";
  if (!committed.has(got.token)) return "uncommitted_write";
  return "unexpected_file";
}
