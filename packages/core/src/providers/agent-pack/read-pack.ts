// R-PV-1: the controller's own reading of an agent pack on its host (pack-format.ts says what a
// pack is): every regular file hashed from its bytes, the manifest parsed, the tree digest
// computed. Links, special files and names the sandbox-side digest could not reproduce are
// refused, so what is placed and what is verified are exactly these files. A pack that cannot be
// read is the agent's configuration error (agent_pack_unreadable), never a verification read.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { lstat, readdir, readFile } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { z } from "zod";
import { DomainError, messageOf } from "../../errors";
import type { AgentPackFile } from "../types";
import { checkPackPath, MAX_PACK_BYTES, MAX_PACK_FILES, PACK_MANIFEST_FILE, packManifest, safePackComponent, treeDigest, type PackManifest } from "./pack-format";

export interface HostAgentPack {
  directory: string;
  manifest: PackManifest;
  /** The tree digest of the host copy (what the sandbox's copy must hash to). */
  digest: string;
  files: AgentPackFile[];
}

const unreadable = (directory: string, why: string) =>
  new DomainError("invalid", "agent_pack_unreadable", `The agent pack at ${directory} cannot be used: ${why}.`, { directory });

async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(path), hash);
  return hash.digest("hex");
}

export async function readHostAgentPack(directory: string): Promise<HostAgentPack> {
  if (!isAbsolute(directory)) throw unreadable(directory, "its directory must be an absolute path");
  const root = await lstat(directory).catch((error: unknown) => {
    throw unreadable(directory, messageOf(error));
  });
  if (!root.isDirectory()) throw unreadable(directory, "it is not a directory");
  const files: AgentPackFile[] = [];
  const digests: { relativePath: string; sha256: string }[] = [];
  let bytes = 0;
  async function walk(dir: string, prefix: string): Promise<void> {
    for (const name of (await readdir(dir)).sort()) {
      if (!safePackComponent(name)) throw unreadable(directory, `the name ${JSON.stringify(name)} cannot be verified in a sandbox (a backslash or control character)`);
      const full = join(dir, name);
      const relativePath = prefix === "" ? name : `${prefix}/${name}`;
      const stat = await lstat(full);
      if (stat.isDirectory()) {
        await walk(full, relativePath);
        continue;
      }
      if (!stat.isFile()) throw unreadable(directory, `${relativePath} is a link or special file (a pack holds only directories and regular files)`);
      bytes += stat.size;
      if (files.length >= MAX_PACK_FILES || bytes > MAX_PACK_BYTES) throw unreadable(directory, `it holds more than ${MAX_PACK_FILES} files or ${MAX_PACK_BYTES} bytes`);
      checkPackPath(relativePath);
      const sha256 = await sha256Of(full);
      digests.push({ relativePath, sha256 });
      files.push({ relativePath, sizeBytes: stat.size, executable: (stat.mode & 0o111) !== 0, open: () => Promise.resolve(createReadStream(full)) });
    }
  }
  try {
    await walk(directory, "");
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw unreadable(directory, messageOf(error));
  }
  const manifestText = await readFile(join(directory, PACK_MANIFEST_FILE), "utf8").catch(() => null);
  if (manifestText === null) throw unreadable(directory, `it has no ${PACK_MANIFEST_FILE}`);
  let json: unknown;
  try {
    json = JSON.parse(manifestText);
  } catch {
    throw unreadable(directory, `${PACK_MANIFEST_FILE} is not JSON`);
  }
  const parsed = packManifest.safeParse(json);
  if (!parsed.success) throw unreadable(directory, `${PACK_MANIFEST_FILE} is invalid: ${z.prettifyError(parsed.error)}`);
  const manifest = parsed.data;
  const program = manifest.versionCommand[0] as string;
  if (!files.some((file) => file.relativePath === program && file.executable)) {
    throw unreadable(directory, `its versionCommand's program ${JSON.stringify(program)} is not an executable file of the pack`);
  }
  return { directory, manifest, digest: treeDigest(digests), files };
}
