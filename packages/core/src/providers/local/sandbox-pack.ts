// R-PV-1: the local provider's placeAgentPack. The pack's files are written to control/pack/
// (sandbox-layout.ts), next to the exported workspace, never inside it, so no copyback carries the
// runtime to the host. All or nothing, as placeInputs: every file goes into a private staging
// directory created exclusively (never through a link); only when all of them are written with
// the sizes the controller read is the staging directory renamed into place, replacing an earlier
// pack (a reused sandbox). Files are 0400 (0500 when executable); under bubblewrap the directory
// is bound read-only (bubblewrap.ts). Whatever this writes, the verification read hashes the
// placed tree itself through exec (dispatch/verify-agent-pack.ts).
import { randomBytes } from "node:crypto";
import { constants, createWriteStream } from "node:fs";
import { lstat, mkdir, open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { DomainError, errnoOf } from "../../errors";
import { checkPackPath } from "../agent-pack/pack-format";
import type { AgentPackFile, PlacedAgentPack } from "../types";
import type { SandboxLayout } from "./sandbox-layout";

/** The pack directory when the sandbox has one (a real directory, not a link), else null. */
export async function packDirectoryOf(layout: SandboxLayout): Promise<string | null> {
  const stats = await lstat(layout.packDir).catch((error: unknown) => {
    if (errnoOf(error) === "ENOENT") return null;
    throw error;
  });
  return stats?.isDirectory() ? layout.packDir : null;
}

async function writeFile(staging: string, file: AgentPackFile): Promise<void> {
  const parts = checkPackPath(file.relativePath);
  let dir = staging;
  for (const part of parts.slice(0, -1)) {
    dir = join(dir, part);
    await mkdir(dir, { mode: 0o700 }).catch((error: unknown) => {
      if (errnoOf(error) !== "EEXIST") throw error;
    });
  }
  const path = join(dir, parts[parts.length - 1] as string);
  const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await pipeline(await file.open(), createWriteStream("", { fd: handle.fd, autoClose: false }));
    const written = (await handle.stat()).size;
    if (written !== file.sizeBytes) {
      throw new DomainError("conflict", "provider_agent_pack_incomplete", `The agent pack's ${file.relativePath} has ${written} bytes, not ${file.sizeBytes}.`);
    }
    await handle.sync();
    await handle.chmod(file.executable ? 0o500 : 0o400);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

export async function placeLocalAgentPack(layout: SandboxLayout, files: readonly AgentPackFile[]): Promise<PlacedAgentPack> {
  if (files.length === 0) throw new DomainError("invalid", "agent_pack_empty", "An agent pack holds at least its manifest.");
  const staging = join(layout.control, `.pack-${randomBytes(6).toString("hex")}`);
  await mkdir(staging, { mode: 0o700 });
  try {
    for (const file of files) await writeFile(staging, file);
    const old = join(layout.control, `.pack-old-${randomBytes(6).toString("hex")}`);
    const replaced = await rename(layout.packDir, old).then(
      () => true,
      (error: unknown) => {
        if (errnoOf(error) === "ENOENT") return false;
        throw error;
      },
    );
    await rename(staging, layout.packDir);
    if (replaced) await rm(old, { recursive: true, force: true });
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  // The agent sees the sandbox at its host path (bubblewrap binds it there).
  return { directory: layout.packDir };
}
