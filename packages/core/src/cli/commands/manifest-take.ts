// `copyback manifest take DIR [-o FILE]`: the manifest of a directory (what a sandbox's seeding
// records as the merge baseline). Without -o the manifest itself is the output.
import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import path from "node:path";
import { takeManifest, type Manifest } from "../../copyback/manifest/index";
import { EXIT } from "../exit-codes";
import { formatBytes } from "../format";
import { requireDirectory } from "../input-files";
import type { CommandResult } from "../io";

export interface ManifestTakeOptions {
  output?: string;
  exclude: string[];
  json: boolean;
}

export async function manifestTake(dir: string, opts: ManifestTakeOptions): Promise<CommandResult> {
  await requireDirectory(dir, "The directory");
  const manifest = await takeManifest(dir, { exclude: opts.exclude });
  const summary = summarize(manifest);
  if (opts.output === undefined) {
    return {
      exitCode: EXIT.ok,
      json: { manifest, ...summary },
      text: [JSON.stringify(manifest, null, 2)],
    };
  }
  await writeFileAtomically(opts.output, `${JSON.stringify(manifest, null, 2)}\n`);
  return {
    exitCode: EXIT.ok,
    json: { output: opts.output, ...summary },
    text: [
      `wrote ${opts.output}: ${summary.entries} entries (${summary.files} files, ${summary.directories} directories, ${summary.symlinks} symlinks, ${formatBytes(summary.bytes)})`,
    ],
  };
}

function summarize(manifest: Manifest) {
  let files = 0;
  let directories = 0;
  let symlinks = 0;
  let bytes = 0;
  for (const entry of manifest.entries) {
    if (entry.type === "file") {
      files++;
      bytes += entry.size ?? 0;
    } else if (entry.type === "directory") directories++;
    else symlinks++;
  }
  return { entries: manifest.entries.length, files, directories, symlinks, bytes };
}

/** A reader never sees half a manifest: written beside the destination, fsynced, renamed. */
async function writeFileAtomically(file: string, contents: string): Promise<void> {
  const temp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${randomBytes(4).toString("hex")}.tmp`,
  );
  const handle = await open(temp, "wx", 0o644);
  try {
    await handle.writeFile(contents, "utf8");
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
