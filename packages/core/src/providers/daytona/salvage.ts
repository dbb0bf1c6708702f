// salvageExport (R-UA-2) for Daytona: after a rejected archive, a second one of files, directories
// and only the relative symlinks that resolve inside the workspace (absolute, escaping, dangling
// and looping links omitted, never followed or deleted; hard-linked files as bytes; fifos, sockets
// and devices left out; exclusions still apply; empty directories kept). The links are judged on
// the host from the sandbox's listing, with the archive module's own resolver, first against the
// sandbox's tree and then again as the validator will see the archive (as copyback/archive/
// salvage.ts does for a local workspace); GNU tar then writes exactly the chosen entries.
import { checkLinkTarget } from "../../copyback/archive/entry-path";
import { resolveLimits } from "../../copyback/archive/limits";
import { SALVAGE_INFO_MESSAGE } from "../../copyback/archive/salvage";
import { resolveLinkTarget, type LinkLookup } from "../../copyback/archive/symlink-resolution";
import { linkLookupKey } from "../../copyback/archive/tree-policy";
import type { Readable } from "node:stream";
import type { ExportOptions, LeaseHandle } from "../types";
import { listWorkspace } from "./delta-export";
import type { ListedEntry } from "./delta-scan";
import { streamListedEntries } from "./export";
import type { DaytonaSandboxes } from "./sandboxes";

/** Pure: the entries the salvage archive holds, in the listing's order. */
export async function selectSalvage(entries: readonly ListedEntry[]): Promise<ListedEntry[]> {
  const limits = resolveLimits();
  const byPath = new Map(entries.map((e) => [e.path, e]));
  const inTree = (components: readonly string[]): LinkLookup => {
    const found = byPath.get(components.join("/"));
    if (!found) return { kind: "missing" };
    return found.type === "l" ? { kind: "symlink", target: found.target } : { kind: "other" };
  };
  let links: ListedEntry[] = [];
  for (const entry of entries) {
    if (entry.type !== "l" || entry.target === "" || checkLinkTarget(entry.path, entry.target, limits)) continue;
    if ((await resolveLinkTarget(entry.path.split("/").slice(0, -1), entry.target, inTree)).kind === "inside") links.push(entry);
  }
  // The validator resolves through the archive's links only: re-check in its terms until stable.
  for (;;) {
    const byKey = new Map(links.map((l) => [linkLookupKey(l.path, limits), l.target]));
    const inArchive = (components: readonly string[]): LinkLookup => {
      const target = byKey.get(linkLookupKey(components.join("/"), limits));
      return target === undefined ? { kind: "other" } : { kind: "symlink", target };
    };
    const kept: ListedEntry[] = [];
    for (const link of links) {
      if ((await resolveLinkTarget(link.path.split("/").slice(0, -1), link.target, inArchive)).kind === "inside") kept.push(link);
    }
    if (kept.length === links.length) break;
    links = kept;
  }
  const keptLinks = new Set(links);
  return entries.filter((e) => e.type === "d" || e.type === "f" || keptLinks.has(e));
}

export async function salvageExport(sandboxes: DaytonaSandboxes, lease: LeaseHandle, options: ExportOptions = {}): Promise<{ archive: Readable; message: string }> {
  const { client, sandbox } = await sandboxes.open(lease, options.signal);
  const io = { client, sandbox, signal: options.signal };
  const chosen = await selectSalvage((await listWorkspace(io, options.exclude)).entries);
  const archive = await streamListedEntries(sandboxes, lease, io, "salvage", chosen.map((e) => e.path), options.signal);
  return { archive, message: SALVAGE_INFO_MESSAGE };
}
