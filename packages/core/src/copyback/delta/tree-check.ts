// The archive's path and link policy (R-UA-2), applied to a complete snapshot manifest. A delta
// archive holds only some entries, so its own validation cannot see the whole tree its links
// resolve in; this check runs the same entry-path, link-target and tree rules (through the
// archive module's own policy code: one place for each rule) over every manifest entry.
import { checkEntryPath, checkLinkTarget } from "../archive/entry-path";
import { resolveLimits, type ArchiveLimits } from "../archive/limits";
import { ArchiveTreePolicy } from "../archive/tree-policy";
import { violation, type ArchiveViolation } from "../archive/violations";
import type { Manifest } from "../manifest/types";

const MAX_REPORTED = 100;

export async function checkManifestTree(
  manifest: Manifest,
  limits?: Partial<ArchiveLimits>,
): Promise<ArchiveViolation[]> {
  const resolved = resolveLimits(limits);
  const found: ArchiveViolation[] = [];
  if (manifest.entries.length > resolved.maxEntries) {
    found.push(violation("too_many_entries", "", `more than ${resolved.maxEntries} entries`));
    return found;
  }
  let totalBytes = 0;
  const tree = new ArchiveTreePolicy(resolved);
  for (const entry of manifest.entries) {
    if (found.length >= MAX_REPORTED) return found;
    const checked = checkEntryPath(entry.path, resolved);
    if (!checked.ok) {
      found.push(checked.violation);
      continue;
    }
    if (entry.type === "file") {
      const size = entry.size ?? 0;
      totalBytes += size;
      if (size > resolved.maxEntryBytes)
        found.push(
          violation(
            "entry_too_large",
            entry.path,
            `file is larger than ${resolved.maxEntryBytes} bytes`,
          ),
        );
    }
    let resolve = true;
    if (entry.type === "symlink") {
      const bad = checkLinkTarget(entry.path, entry.target ?? "", resolved);
      if (bad) {
        found.push(bad);
        resolve = false;
      }
    }
    const conflict = tree.add(entry.path, checked.components, entry.type, entry.target, resolve);
    if (conflict) found.push(conflict);
  }
  if (totalBytes > resolved.maxTotalBytes)
    found.push(
      violation("total_too_large", "", `files total more than ${resolved.maxTotalBytes} bytes`),
    );
  found.push(...(await tree.finish()));
  return found.slice(0, MAX_REPORTED);
}
