// seedWorkspace: the host's archive spooled to a private file (hashed as it is written), validated
// there exactly as the local provider validates a seed (an unsafe archive changes nothing), then
// streamed into the sandbox, checked there byte for byte, and extracted into a fresh directory
// that replaces the workspace in one rename. The previous workspace, its stat cache and an earlier
// run's inputs go with it (R-RC-5: an earlier run's inputs are not this run's); the seed's own
// stat cache is recorded then (delta-export.ts).
import { createHash, randomBytes } from "node:crypto";
import { constants, createWriteStream } from "node:fs";
import { mkdir, open, rm } from "node:fs/promises";
import { join } from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { validateArchive } from "../../copyback/archive/validate";
import { DomainError } from "../../errors";
import type { LeaseHandle } from "../types";
import { refuseUnderRunningAgent } from "./busy";
import { runScript } from "./commands";
import { LAYOUT, shellQuote } from "./layout";
import type { DaytonaSandboxes } from "./sandboxes";
import { transferPath, uploadChecked, type FileDigest } from "./transfer";
import { recordSeedStatCache } from "./delta-export";

/** Writes `archive` to a new private file, returning its digest. */
async function spool(archive: Readable, file: string): Promise<FileDigest> {
  const hash = createHash("sha256");
  let size = 0;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await pipeline(archive, count, createWriteStream("", { fd: handle.fd, autoClose: false }));
  } finally {
    await handle.close();
  }
  return { size, sha256: hash.digest("hex") };
}

/** Shell: extract `tarFile` into a new directory and swap it in for the workspace. */
export function swapInScript(tarFile: string): string {
  const ws = shellQuote(LAYOUT.workspace);
  const next = shellQuote(`${LAYOUT.workspace}.next`);
  const old = shellQuote(`${LAYOUT.workspace}.old`);
  return [
    "set -e",
    `rm -rf ${next} ${old}`,
    `mkdir -p ${next}`,
    // The archive was validated on the host; owners are the sandbox user's, modes as archived.
    `tar -xf ${shellQuote(tarFile)} -C ${next} --no-same-owner`,
    `if [ -e ${ws} ]; then mv ${ws} ${old}; fi`,
    `mv ${next} ${ws}`,
    `rm -rf ${old} ${shellQuote(LAYOUT.inputs)} ${shellQuote(LAYOUT.statCache)} ${shellQuote(tarFile)}`,
  ].join("\n");
}

export async function seedWorkspace(sandboxes: DaytonaSandboxes, lease: LeaseHandle, archive: Readable): Promise<void> {
  const { client, sandbox } = await sandboxes.open(lease);
  await refuseUnderRunningAgent(client, sandbox, lease.leaseId, "the workspace is");
  const staging = sandboxes.settings.stagingDir;
  await mkdir(staging, { recursive: true, mode: 0o700 });
  const file = join(staging, `seed-${randomBytes(8).toString("hex")}.tar`);
  try {
    const digest = await spool(archive, file);
    const verdict = await validateArchive(file);
    if (verdict.kind === "rejected") {
      throw new DomainError("invalid", "provider_seed_archive_unsafe", "The seed archive was refused.", { violations: verdict.violations });
    }
    const remote = transferPath("seed");
    await runScript(client, sandbox, `mkdir -p ${shellQuote(LAYOUT.transfers)}`, { what: "preparing the seed", timeoutSec: 60 });
    await uploadChecked(client, sandbox, file, digest, remote, { what: "uploading the seed archive", timeoutSec: sandboxes.settings.transferTimeoutSec });
    await runScript(client, sandbox, swapInScript(remote), { what: "extracting the seed archive", timeoutSec: sandboxes.settings.transferTimeoutSec });
    // The delta export's stat cache, while no agent runs (an accelerator: its failure is not the seed's).
    await recordSeedStatCache(client, sandbox, sandboxes.statCaches).catch(() => undefined);
  } finally {
    await rm(file, { force: true });
  }
}
