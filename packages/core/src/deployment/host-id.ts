// The host identity of an instance (issue 23 part 1, DESIGN.md section 6): host-local things
// (execution workspaces, `local` sandboxes, staging and lock files) are bound to it, and claims,
// sweeps and cleanup act only on their own host's. It is NOT os.hostname(): two containers may
// share a hostname, and a renamed machine keeps its disks. `COPYBACK_HOST_ID` sets it; otherwise
// it is generated once into the instance root (HOST_ID_FILE) and read back on every start, so a
// restarted worker is the same host and a second instance root is another one.
import { randomBytes } from "node:crypto";
import { link, readFile, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { invalid } from "../errors";

/** The file in the instance root that holds the generated host id. */
export const HOST_ID_FILE = "host-id";

/** Lowercase letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 63 characters. */
const HOST_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** A valid host id, or a clear error naming what is wrong (it goes into SQL filters and paths). */
export function parseHostId(raw: string, source: string): string {
  if (raw.length === 0) throw invalid("host_id_invalid", `The host id from ${source} is empty.`);
  if (raw.length > 63) throw invalid("host_id_invalid", `The host id from ${source} is ${raw.length} characters long; at most 63 are allowed.`);
  if (!HOST_ID_PATTERN.test(raw)) {
    throw invalid(
      "host_id_invalid",
      `The host id from ${source} (${JSON.stringify(raw)}) may hold only lowercase letters, digits, '.', '_' and '-', and must start with a letter or digit.`,
    );
  }
  return raw;
}

export interface ResolveHostIdInput {
  instanceRoot: string;
  /** COPYBACK_HOST_ID as configured (undefined: not set). */
  configured?: string;
}

export interface ResolvedHostId {
  hostId: string;
  source: "env" | "file" | "generated";
}

/**
 * The host id of this instance. A configured value wins (and is validated); else the instance
 * root's file is read; else one is generated and created atomically (link(2) of a fully written
 * temp file fails if another process created it first, and then that one's id is read back), so
 * two processes starting at once on one root agree. A file holding a bad id is an error, never
 * silently replaced: replacing it would unbind every workspace of this host.
 */
export async function resolveHostId(input: ResolveHostIdInput): Promise<ResolvedHostId> {
  if (input.configured !== undefined) return { hostId: parseHostId(input.configured, "COPYBACK_HOST_ID"), source: "env" };
  const file = path.join(input.instanceRoot, HOST_ID_FILE);
  const existing = await readHostIdFile(file);
  if (existing !== null) return { hostId: existing, source: "file" };
  const generated = `h-${randomBytes(8).toString("hex")}`;
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(temp, `${generated}\n`, { mode: 0o600, flag: "wx" });
  try {
    await link(temp, file);
    return { hostId: generated, source: "generated" };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const winner = await readHostIdFile(file);
    if (winner === null) throw error;
    return { hostId: winner, source: "file" };
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/**
 * The host id without creating one (`copyback doctor` only reads): the configured value, else the
 * instance root's file, else absent. A bad value is the same clear error as at start.
 */
export async function readHostId(input: ResolveHostIdInput): Promise<ResolvedHostId | null> {
  if (input.configured !== undefined) return { hostId: parseHostId(input.configured, "COPYBACK_HOST_ID"), source: "env" };
  const existing = await readHostIdFile(path.join(input.instanceRoot, HOST_ID_FILE));
  return existing === null ? null : { hostId: existing, source: "file" };
}

async function readHostIdFile(file: string): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  return parseHostId(text.trim(), file);
}

/**
 * Issue 23 (host affinity), pure: the other host a piece of host-local work is bound to, or null
 * when it is unbound or this host's. The one rule behind every refusal of another host's work
 * (Discard, the export-only retry) and the sweeps' SQL narrowing (host-bound-sweep.ts).
 */
export function boundElsewhere(bound: string | null | undefined, self: string): string | null {
  return bound && bound !== self ? bound : null;
}

