// exportWorkspace: GNU tar builds the archive inside the sandbox (relative "./" paths, symlinks as
// symlinks, hard-linked files stored as bytes: --hard-dereference, exclusions left out entirely),
// the sandbox states its size and sha256, and the controller streams it out through the check of
// transfer.ts. The caller's signal (the export deadline, COPYBACK_EXPORT_TIMEOUT_MS) aborts both
// the command's wait and the download; the sandbox's copy is removed once the stream settles.
import type { Readable } from "node:stream";
import type { Sandbox } from "@daytonaio/sdk";
import { compileExclude } from "../../copyback/manifest/exclude";
import type { ExportOptions, LeaseHandle } from "../types";
import { runScript } from "./commands";
import { LAYOUT, shellQuote } from "./layout";
import type { DaytonaClient } from "./client";
import type { DaytonaSandboxes } from "./sandboxes";
import { digestScript, downloadChecked, parseDigest, transferPath } from "./transfer";
import { transferDropped } from "./errors";

/**
 * Pure: GNU tar's exclusion options for copyback's exclusion syntax (copyback/manifest/exclude.ts):
 * a bare name is any path component (unanchored), a path is anchored at the workspace root; no
 * wildcards in either, as in copyback's own matcher. A directory excluded is not descended into.
 */
export function tarExcludeArgs(patterns: readonly string[] | undefined): string[] {
  if (!patterns || patterns.length === 0) return [];
  compileExclude([...patterns]); // the same refusal of a malformed pattern as every other export
  const names: string[] = [];
  const paths: string[] = [];
  for (const raw of patterns) {
    const pattern = raw.replace(/^\.\//, "").replace(/\/+$/, "");
    if (pattern.includes("/") || raw.startsWith("./")) paths.push(`./${pattern}`);
    else names.push(pattern);
  }
  const args = ["--no-wildcards"];
  if (names.length > 0) args.push("--no-anchored", ...names.map((n) => `--exclude=${n}`));
  if (paths.length > 0) args.push("--anchored", ...paths.map((p) => `--exclude=${p}`));
  return args;
}

/** Shell: the workspace archive at `tarFile`, then its digest. */
export function exportScript(tarFile: string, exclude: readonly string[] | undefined): string {
  const options = tarExcludeArgs(exclude).map(shellQuote).join(" ");
  return [
    "set -e",
    `mkdir -p ${shellQuote(LAYOUT.transfers)}`,
    `tar -cf ${shellQuote(tarFile)} --format=gnu --hard-dereference ${options} -C ${shellQuote(LAYOUT.workspace)} .`,
    digestScript(tarFile),
  ].join("\n");
}

/** Builds an archive in the sandbox with `script` and streams it out, checked. */
export async function streamArchiveOut(sandboxes: DaytonaSandboxes, lease: LeaseHandle, kind: string, script: (tarFile: string) => string, signal?: AbortSignal): Promise<Readable> {
  const { client, sandbox } = await sandboxes.open(lease, signal);
  const tarFile = transferPath(kind);
  const timeoutSec = sandboxes.settings.transferTimeoutSec;
  const built = await runScript(client, sandbox, script(tarFile), { what: `building the ${kind} archive`, timeoutSec, signal });
  const digest = parseDigest(built.output);
  if (!digest) throw transferDropped(`${kind} archive: the sandbox stated no size and digest`);
  const removeCopy = () => {
    void runScript(client, sandbox, `rm -f ${shellQuote(tarFile)}`, { what: "removing the sent archive", timeoutSec: 60 }).catch(() => undefined);
  };
  try {
    return await downloadChecked(client, sandbox, tarFile, digest, { what: `${kind} archive`, signal, timeoutSec, onSettled: removeCopy });
  } catch (error) {
    removeCopy();
    throw error;
  }
}

export function exportWorkspace(sandboxes: DaytonaSandboxes, lease: LeaseHandle, options: ExportOptions = {}): Promise<Readable> {
  return streamArchiveOut(sandboxes, lease, "export", (tarFile) => exportScript(tarFile, options.exclude), options.signal);
}

/**
 * Streams a tar of exactly the listed workspace entries (NUL-separated, uploaded first; tar with
 * --no-recursion): the delta's changed entries and the salvage's chosen ones. `kind` names the
 * transfer in errors and paths.
 */
export async function streamListedEntries(
  sandboxes: DaytonaSandboxes,
  lease: LeaseHandle,
  io: { client: DaytonaClient; sandbox: Sandbox },
  kind: "delta" | "salvage",
  paths: readonly string[],
  signal?: AbortSignal,
): Promise<Readable> {
  const list = transferPath(`${kind}-list`);
  await io.client.call(`uploading the ${kind}'s paths`, () => io.sandbox.fs.uploadFile(Buffer.from(paths.map((p) => `${p}\0`).join("")), list), { sandboxId: io.sandbox.id });
  return streamArchiveOut(
    sandboxes,
    lease,
    kind,
    (tarFile) =>
      [
        "set -e",
        "base=$PWD",
        // --no-recursion: exactly the listed entries; a file changed since it was hashed no longer
        // matches the manifest, and the host's verification refuses the archive.
        `tar -cf "$base/${tarFile}" --format=gnu --hard-dereference --no-recursion -C ${shellQuote(LAYOUT.workspace)} --null -T "$base/${list}"`,
        `rm -f "$base/${list}"`,
        digestScript(tarFile),
      ].join("\n"),
    signal,
  );
}
