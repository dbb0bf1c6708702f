// What the host puts into a local sandbox: the workspace seed (a reused sandbox is seeded again
// from the host) and a reconstruction's inputs (R-RC-5). Neither is swapped under a running agent.
import { randomBytes } from "node:crypto";
import { constants, createWriteStream } from "node:fs";
import { open, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { UnsafeArchiveError } from "../../copyback/archive/errors";
import { emptyDirectory, extractValidatedArchive } from "../../copyback/archive/extract";
import { validateArchive } from "../../copyback/archive/validate";
import { DomainError } from "../../errors";
import type { EnvironmentProvider, LeaseHandle, PlacedInputs, SandboxInput } from "../types";
import { realWorkspace, type LocalSandboxes } from "./local-sandboxes";
import { recordState } from "./process-group";
import { placeLocalInputs, removeInputs } from "./sandbox-inputs";
import type { SandboxLayout } from "./sandbox-layout";
import { readProcesses } from "./sandbox-records";
import { recordSeedStatCache, removeStatCache } from "./stat-cache";

export type WorkspaceSeed = Required<Pick<EnvironmentProvider, "seedWorkspace" | "placeInputs">>;

/** Refuses (provider_sandbox_busy) while a recorded process of the lease may still run; `kept` says what is left as it was. */
async function refuseUnderRunningAgent(layout: SandboxLayout, leaseId: string, kept: string): Promise<void> {
  const states = await Promise.all((await readProcesses(layout.processesFile)).map((r) => recordState(r)));
  if (states.some((state) => state !== "dead")) {
    throw new DomainError("conflict", "provider_sandbox_busy", `Processes of lease ${leaseId} are still running; ${kept} not replaced.`);
  }
}

export function workspaceSeed(sandboxes: LocalSandboxes): WorkspaceSeed {
  /**
   * Replaces the workspace's contents with a validated archive (a reused sandbox is seeded again
   * from the host). A rejected archive changes nothing: a non-empty workspace is emptied only
   * after the archive was validated; an empty one is extracted in a single validating pass.
   */
  async function seedWorkspace(lease: LeaseHandle, archive: Readable): Promise<void> {
    const { layout } = await sandboxes.open(lease);
    await realWorkspace(layout);
    // Files are not swapped under a running agent.
    await refuseUnderRunningAgent(layout, lease.leaseId, "the workspace is");
    // The old stat cache describes files about to be replaced: gone before anything changes.
    await removeStatCache(layout.statCacheFile);
    // R-RC-5: an earlier run's inputs are not this run's (placeInputs gives a run its own, after the seed).
    await removeInputs(layout);
    // Validation reads a file twice (validate, then extract what was validated): spool it privately.
    const file = join(layout.control, `seed-${randomBytes(6).toString("hex")}.tar`);
    const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await pipeline(archive, createWriteStream("", { fd: handle.fd, autoClose: false }));
      await handle.close();
      if ((await readdir(layout.workspace)).length > 0) {
        const verdict = await validateArchive(file);
        if (verdict.kind === "rejected") throw new UnsafeArchiveError(verdict.violations);
        await emptyDirectory(layout.workspace);
      }
      await extractValidatedArchive(file, layout.workspace);
      // The delta export's stat cache, while nothing else can write the workspace.
      await recordSeedStatCache(layout.workspace, layout.statCacheFile);
    } catch (error) {
      if (error instanceof UnsafeArchiveError) {
        throw new DomainError("invalid", "provider_seed_archive_unsafe", "The seed archive was refused.", { violations: error.violations });
      }
      throw error;
    } finally {
      await handle.close().catch(() => undefined);
      await rm(file, { force: true });
    }
  }

  /** R-RC-5 (capability `placeInputs`): sandbox-inputs.ts; not under a running agent, like a seed. */
  async function placeInputs(lease: LeaseHandle, inputs: readonly SandboxInput[]): Promise<PlacedInputs> {
    const { layout, record } = await sandboxes.open(lease);
    await realWorkspace(layout);
    await refuseUnderRunningAgent(layout, lease.leaseId, "its inputs are");
    return placeLocalInputs(layout, inputs, record.isolation === "bubblewrap");
  }

  return { seedWorkspace, placeInputs };
}
