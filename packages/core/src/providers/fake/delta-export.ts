// The fake provider's delta export (capability `exportDelta`, opt-in: createFakeProvider({
// exportDelta: true })): the in-memory workspace's manifest in exactly the form the host's
// takeManifest gives for the same tree after a full export, the entries that differ from the
// baseline as a real tar (virtual-workspace.ts's encoder), and its "stat cache": the sha256 of
// each entry object, recorded at seeding. A script's change replaces the entry object, so a
// changed file is always hashed again, as a write moves a real file's ctime.
import { createHash } from "node:crypto";
import { diffManifests } from "../../copyback/delta/diff";
import { compileExclude } from "../../copyback/manifest/exclude";
import { comparePaths } from "../../copyback/manifest/paths";
import type { Manifest, ManifestEntry } from "../../copyback/manifest/types";
import type { DeltaExport } from "../types";
import { exportOrder, workspaceTarStream, type FakeEntry, type FakeWorkspace } from "./virtual-workspace";

/** sha256 by entry object: the fake's stat cache (absent until the sandbox is seeded). */
export type FakeHashCache = WeakMap<FakeEntry, string>;

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** Every file's hash, recorded when the sandbox is seeded. */
export function seedHashCache(workspace: FakeWorkspace): FakeHashCache {
  const cache: FakeHashCache = new WeakMap();
  for (const entry of workspace.values()) if (entry.kind === "file") cache.set(entry, sha256(entry.content));
  return cache;
}

export interface FakeDeltaInput {
  workspace: FakeWorkspace;
  baseline: Manifest;
  exclude?: readonly string[];
  cache: FakeHashCache | undefined;
  /** Injected fault (FakeFaults.corruptDelta): the delta disagrees with its own archive. */
  corrupt: boolean;
}

export function fakeDeltaExport(input: FakeDeltaInput): DeltaExport {
  const excluded = compileExclude(input.exclude ? [...input.exclude] : undefined);
  let hashedFiles = 0;
  let hashedBytes = 0;
  const entries: ManifestEntry[] = [];
  for (const [path, entry] of exportOrder(input.workspace, (p) => !excluded(p))) {
    if (entry.kind === "directory") entries.push({ path, type: "directory", mode: entry.mode });
    else if (entry.kind === "symlink") entries.push({ path, type: "symlink", mode: 0o777, target: entry.target });
    else {
      let hash = input.cache?.get(entry);
      if (hash === undefined) {
        hash = sha256(entry.content);
        hashedFiles += 1;
        hashedBytes += entry.content.length;
        input.cache?.set(entry, hash);
      }
      entries.push({ path, type: "file", mode: entry.mode, sha256: hash, size: entry.content.length });
    }
  }
  entries.sort((a, b) => comparePaths(a.path, b.path));
  const manifest: Manifest = { version: 1, entries };
  const baseline: Manifest = { version: 1, entries: input.baseline.entries.filter((e) => !excluded(e.path)) };
  const { changed, removed } = diffManifests(baseline, manifest);
  const carried = new Set(changed.map((e) => e.path));
  let archive = changed.length > 0 ? workspaceTarStream(input.workspace, (p) => carried.has(p)) : null;
  if (input.corrupt) {
    const file = changed.find((e) => e.type === "file");
    if (file) file.sha256 = sha256(Buffer.from(`corrupted ${file.sha256 ?? ""}`));
    // Nothing changed: an archive although there is nothing to carry.
    else archive = workspaceTarStream(new Map());
  }
  return {
    manifest: JSON.parse(JSON.stringify(manifest)) as unknown,
    archive,
    report: { changed: changed.length, removed: removed.length, hashedFiles, hashedBytes, statCache: input.cache ? "used" : "absent" },
  };
}
