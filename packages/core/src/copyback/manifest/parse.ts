// Validation of a manifest that comes back from storage (the baseline). A merge trusts the
// baseline to decide what it may delete, so a malformed one is refused before anything runs.
import { z } from "zod";
import { ManifestError } from "./errors";
import { comparePaths, isSafeRelativePath, parentOf } from "./paths";
import type { Manifest, ManifestEntry } from "./types";

const entrySchema = z.object({
  path: z.string(),
  type: z.enum(["file", "directory", "symlink"]),
  mode: z.number().int().min(0).max(0o777),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  size: z.number().int().min(0).optional(),
  target: z.string().min(1).optional(),
});

const manifestSchema = z.object({ version: z.literal(1), entries: z.array(entrySchema) });

/**
 * Returns a sorted copy, or throws ManifestError("invalid_manifest"). Checks what the schema
 * cannot: normalized relative paths, no duplicates, every parent listed as a directory, and
 * the fields each type requires (files: sha256; symlinks: target without NUL).
 */
export function parseManifest(value: unknown): Manifest {
  const parsed = manifestSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ManifestError(
      "invalid_manifest",
      `Invalid manifest: ${issue ? `${issue.path.join(".")}: ${issue.message}` : "malformed"}`,
    );
  }
  const entries: ManifestEntry[] = parsed.data.entries.map((entry) => {
    const out: ManifestEntry = { path: entry.path, type: entry.type, mode: entry.mode };
    if (entry.type === "file") {
      out.sha256 = entry.sha256;
      if (entry.size !== undefined) out.size = entry.size;
    } else if (entry.type === "symlink") {
      out.target = entry.target;
    }
    return out;
  });
  entries.sort((a, b) => comparePaths(a.path, b.path));
  const types = new Map<string, ManifestEntry["type"]>();
  for (const entry of entries) {
    const fail = (why: string): never => {
      throw new ManifestError(
        "invalid_manifest",
        `Invalid manifest entry ${JSON.stringify(entry.path)}: ${why}`,
        entry.path,
      );
    };
    if (!isSafeRelativePath(entry.path)) fail("not a normalized relative path");
    if (types.has(entry.path)) fail("listed twice");
    const parent = parentOf(entry.path);
    if (parent !== "" && types.get(parent) !== "directory")
      fail("its parent is not listed as a directory");
    if (entry.type === "file" && entry.sha256 === undefined) fail("a file needs sha256");
    if (entry.type === "symlink" && (entry.target === undefined || entry.target.includes("\0")))
      fail("a symlink needs a target");
    types.set(entry.path, entry.type);
  }
  return { version: 1, entries };
}
