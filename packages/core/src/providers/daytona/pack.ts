// R-PV-1 (capability `agentPack`): the agent's pack in a Daytona sandbox, at LAYOUT.pack, beside
// the exported workspace and never inside it (no copyback carries the runtime to the host). All
// or nothing, as placeInputs: the files are uploaded into a fresh directory beside it; the sandbox
// then lists and hashes that directory itself (find + sha256sum), and only when it holds exactly
// the files that were streamed, byte for byte, is it swapped in by one rename (a reused sandbox's
// earlier pack goes). Files are made 0400 (0500 when executable); the agent runs as the sandbox's
// one user, so this does not protect them from it. Whatever this answers, the verification read
// (dispatch/verify-agent-pack.ts) hashes the placed tree again through exec before a turn.
import { pipeline } from "node:stream/promises";
import { DomainError } from "../../errors";
import { checkPackPath } from "../agent-pack/pack-format";
import type { AgentPackFile, LeaseHandle, PlacedAgentPack } from "../types";
import { refuseUnderRunningAgent } from "./busy";
import { runScript } from "./commands";
import { providerErrorOf } from "./errors";
import { LAYOUT, shellQuote } from "./layout";
import type { DaytonaSandboxes } from "./sandboxes";
import { hashing, sandboxWorkdir } from "./uploads";

const NEXT = `${LAYOUT.pack}.next`;
const OLD = `${LAYOUT.pack}.old`;
/** The executables' paths, one a line (pack names hold no newline: pack-format.ts). */
const EXECUTABLES = `${LAYOUT.control}/pack-executables.txt`;

/** Shell: every file below NEXT as `<sha256>  ./<path>`, sorted (the sandbox's own reading). */
const LIST_SCRIPT = `cd ${shellQuote(NEXT)} && find . -type f -print | LC_ALL=C sort | while IFS= read -r f; do sha256sum -- "$f" || exit 4; done`;

/** Shell: a directory of read-only files made removable again (a file's mode does not matter to rm, its directory's does). */
const removable = (dir: string) => `if [ -e ${shellQuote(dir)} ]; then chmod -R u+w ${shellQuote(dir)} && rm -rf ${shellQuote(dir)}; fi`;

/** Pure: the sandbox's listing as path -> sha256, or null when a line is not one sha256sum prints. */
export function parsePackListing(output: string): Map<string, string> | null {
  const files = new Map<string, string>();
  for (const line of output.split("\n")) {
    if (line === "") continue;
    const match = /^([0-9a-f]{64}) {2}\.\/(.+)$/.exec(line);
    if (!match) return null;
    files.set(match[2] as string, match[1] as string);
  }
  return files;
}

/** Pure: why the sandbox's listing is not exactly `sent`, or null when it is. */
export function listingMismatch(listing: ReadonlyMap<string, string>, sent: ReadonlyMap<string, string>): string | null {
  for (const [path, sha256] of sent) {
    const found = listing.get(path);
    if (found === undefined) return `${path} is missing`;
    if (found !== sha256) return `${path} holds other bytes`;
  }
  for (const path of listing.keys()) if (!sent.has(path)) return `${path} was not sent`;
  return null;
}

async function upload(sandboxes: DaytonaSandboxes, lease: LeaseHandle, files: readonly AgentPackFile[]): Promise<string> {
  const { client, sandbox, address } = await sandboxes.open(lease);
  await refuseUnderRunningAgent(client, sandbox, lease.leaseId, "its agent pack is");
  const workdir = await sandboxWorkdir(client, sandbox);
  const dirs = new Set<string>();
  for (const file of files) {
    const parts = checkPackPath(file.relativePath);
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join("/"));
  }
  const mkdirs = [NEXT, ...[...dirs].map((dir) => `${NEXT}/${dir}`)].map(shellQuote).join(" ");
  await runScript(client, sandbox, `set -e\n${removable(NEXT)}\nmkdir -p ${mkdirs}`, { what: "preparing the agent pack", timeoutSec: 60 });
  try {
    const sent = new Map<string, string>();
    for (const file of files) {
      const hash = hashing();
      // A stream is sent once (never retried from where it broke): its failure fails the placement.
      const sending = sandbox.fs.uploadFileStream(hash.stream, `${NEXT}/${file.relativePath}`).catch((error: unknown) => {
        throw providerErrorOf(error, { what: `uploading the agent pack's ${file.relativePath}`, variable: address.apiKeyEnv, sandboxId: sandbox.id });
      });
      const [piped] = await Promise.allSettled([pipeline(await file.open(), hash.stream), sending]);
      await sending;
      if (piped.status === "rejected") throw piped.reason;
      const { size, sha256 } = hash.digest();
      if (size !== file.sizeBytes) {
        throw new DomainError("conflict", "provider_agent_pack_incomplete", `The agent pack's ${file.relativePath} has ${size} bytes, not ${file.sizeBytes}.`);
      }
      sent.set(file.relativePath, sha256);
    }
    const listing = parsePackListing((await runScript(client, sandbox, LIST_SCRIPT, { what: "checking the agent pack", timeoutSec: 300 })).output);
    const mismatch = listing ? listingMismatch(listing, sent) : "the sandbox's listing could not be read";
    if (mismatch) throw new DomainError("unavailable", "transfer_dropped", `The agent pack did not arrive intact in the sandbox: ${mismatch}.`);
    const executables = files.filter((f) => f.executable).map((f) => `${f.relativePath}\n`).join("");
    await client.call("uploading the pack's executables", () => sandbox.fs.uploadFile(Buffer.from(executables), EXECUTABLES), { sandboxId: sandbox.id });
    await runScript(
      client,
      sandbox,
      [
        "set -e",
        `find ${shellQuote(NEXT)} -type f -exec chmod 0400 {} +`,
        `(cd ${shellQuote(NEXT)} && while IFS= read -r f; do chmod 0500 -- "$f"; done) < ${shellQuote(EXECUTABLES)}`,
        `rm -f ${shellQuote(EXECUTABLES)}`,
        removable(OLD),
        `if [ -e ${shellQuote(LAYOUT.pack)} ]; then mv ${shellQuote(LAYOUT.pack)} ${shellQuote(OLD)}; fi`,
        `mv ${shellQuote(NEXT)} ${shellQuote(LAYOUT.pack)}`,
        removable(OLD),
      ].join("\n"),
      { what: "placing the agent pack", timeoutSec: 120 },
    );
  } catch (error) {
    await runScript(client, sandbox, removable(NEXT), { what: "removing an unplaced agent pack", timeoutSec: 60 }).catch(() => undefined);
    throw error;
  }
  return `${workdir}/${LAYOUT.pack}`;
}

export async function placeAgentPack(sandboxes: DaytonaSandboxes, lease: LeaseHandle, files: readonly AgentPackFile[]): Promise<PlacedAgentPack> {
  if (files.length === 0) throw new DomainError("invalid", "agent_pack_empty", "An agent pack holds at least its manifest.");
  // The agent's process sees the pack at this absolute path (its variable COPYBACK_AGENT_PACK_DIR).
  return { directory: await upload(sandboxes, lease, files) };
}
