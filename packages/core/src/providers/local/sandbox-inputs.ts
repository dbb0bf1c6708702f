// R-RC-5: the local provider's placeInputs. A reconstruction's saved sources are written to
// control/inputs/<attachmentId>/<file name>, and its context to control/inputs/reconstruction.json
// (sandbox-layout.ts): next to the exported workspace,
// never inside it, so no copyback can carry them to the host. All or nothing: every file is
// written into a private staging directory created exclusively (never through a link), each from a
// stream the caller verifies as it flows; only when every stream ended cleanly is the staging
// directory renamed into place (replacing earlier inputs). A stream that errors (a verification
// refusal, an unreadable source) removes the staging directory and leaves no input placed.
// Read-only for the agent: files are 0400; under bubblewrap the directory is bound read-only
// (bubblewrap.ts); a plain process group runs with the controller's rights and could change them.
import { randomBytes } from "node:crypto";
import { constants, createWriteStream } from "node:fs";
import { lstat, mkdir, open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { errnoOf } from "../../errors";
import { DomainError } from "../../errors";
import { checkInputPaths, checkInputRelativePath } from "../input-paths";
import { isRenderedInput, type PlacedInputs, type SandboxInput, type StreamedSandboxInput } from "../types";
import type { SandboxLayout } from "./sandbox-layout";

/** The inputs directory when the sandbox has one (a real directory, not a link), else null. */
export async function inputsDirectoryOf(layout: SandboxLayout): Promise<string | null> {
  const stats = await lstat(layout.inputsDir).catch((error: unknown) => {
    if (errnoOf(error) === "ENOENT") return null;
    throw error;
  });
  return stats?.isDirectory() ? layout.inputsDir : null;
}

/** Removes the sandbox's inputs (a new seed: they belonged to the run the sandbox was seeded for before). */
export async function removeInputs(layout: SandboxLayout): Promise<void> {
  await rm(layout.inputsDir, { recursive: true, force: true });
}

export async function placeLocalInputs(layout: SandboxLayout, inputs: readonly SandboxInput[], isolated: boolean): Promise<PlacedInputs> {
  checkInputPaths(inputs.map((i) => i.relativePath));
  // The agent sees the sandbox at its host path (bubblewrap binds it there), so these are its paths
  // too; known before anything is written, so a rendered input (the reconstruction context) names them.
  const placed: PlacedInputs = { directory: layout.inputsDir, paths: inputs.map((i) => join(layout.inputsDir, i.relativePath)), readOnly: isolated };
  const staging = join(layout.control, `.inputs-${randomBytes(6).toString("hex")}`);
  await mkdir(staging, { mode: 0o700 });
  try {
    for (const input of inputs) {
      const parts = checkInputRelativePath(input.relativePath);
      let dir = staging;
      if (parts.length === 2) {
        dir = join(staging, parts[0]);
        await mkdir(dir, { mode: 0o700 }).catch((error: unknown) => {
          if (errnoOf(error) !== "EEXIST") throw error;
        });
      }
      const file = join(dir, parts[parts.length - 1] as string);
      const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      try {
        const rendered = isRenderedInput(input) ? input.render(placed) : null;
        const source = rendered ? Readable.from([rendered]) : await (input as StreamedSandboxInput).open();
        await pipeline(source, createWriteStream("", { fd: handle.fd, autoClose: false }));
        const expected = rendered ? rendered.byteLength : (input as StreamedSandboxInput).sizeBytes;
        const written = (await handle.stat()).size;
        if (written !== expected) {
          throw new DomainError("conflict", "provider_input_incomplete", `The input ${input.relativePath} has ${written} bytes, not ${expected}.`);
        }
        await handle.sync();
        await handle.chmod(0o400);
      } finally {
        await handle.close().catch(() => undefined);
      }
    }
    // Earlier inputs (a reused sandbox) go away first; then the new set appears in one rename.
    const old = join(layout.control, `.inputs-old-${randomBytes(6).toString("hex")}`);
    const replaced = await rename(layout.inputsDir, old).then(
      () => true,
      (error: unknown) => {
        if (errnoOf(error) === "ENOENT") return false;
        throw error;
      },
    );
    await rename(staging, layout.inputsDir);
    if (replaced) await rm(old, { recursive: true, force: true });
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  return placed;
}
