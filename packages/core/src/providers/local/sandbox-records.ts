// The local provider's records in a sandbox's control directory: its identity, the process
// groups running in it (so a restarted controller can still inspect and stop them, R-OWN-12) and
// the stopped marker. Each is versioned JSON read through zod and replaced atomically (write a
// temporary file, rename), so a crash leaves the old or the new record, never half of one.
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, open, readFile, rename, rm } from "node:fs/promises";
import { z } from "zod";
import { errnoOf } from "../../errors";
import { DomainError } from "../../errors";
import { processIdentityRecord } from "../../records/process-identity-record";
import { resourceLimits } from "./resource-limits";

export const sandboxIdentityRecord = z.object({
  schema: z.literal("copyback.local-sandbox.v1"),
  leaseId: z.string(),
  providerLeaseId: z.string(),
  /** R-EX-6: the plugin that allocated it; another plugin on the same instance root keeps out. */
  pluginId: z.string(),
  companyId: z.string(),
  environmentId: z.string(),
  runId: z.string(),
  nonce: z.string().regex(/^[0-9a-f]{32}$/),
  isolation: z.enum(["bubblewrap", "none"]),
  allowNetwork: z.boolean(),
  /** Absent in sandboxes made before limits existed: the defaults apply. */
  limits: resourceLimits.optional(),
  createdAt: z.string(),
});
export type SandboxIdentityRecord = z.infer<typeof sandboxIdentityRecord>;

export const processRecord = z.object({
  execId: z.string(),
  /** The process group the provider started (its leader's PID). */
  pgid: z.number().int().positive(),
  leader: processIdentityRecord,
  /** Under bubblewrap: the sandbox's PID-namespace init; killing it empties the namespace. */
  namespaceInit: processIdentityRecord.nullable(),
  startedAt: z.string(),
});
export type ProcessRecord = z.infer<typeof processRecord>;

const processesFile = z.object({ schema: z.literal("copyback.local-processes.v1"), processes: z.array(processRecord) });

export const stoppedMarker = z.object({ schema: z.literal("copyback.local-stopped.v1"), requestId: z.string(), stoppedAt: z.string(), confirmed: z.boolean() });
export type StoppedMarker = z.infer<typeof stoppedMarker>;

/** R-DT-2: the acquisition-time sentinel as written into the sandbox (types.ts SandboxSentinel). */
export const sandboxSentinelRecord = z.strictObject({
  schema: z.literal("copyback.workspace-sentinel.v1"),
  runId: z.string().min(1),
  leaseId: z.string().min(1),
  providerLeaseId: z.string().min(1),
  allocationFingerprint: z.string().min(1),
  nonce: z.string().regex(/^[0-9a-f]{64}$/),
  createdAt: z.string().min(1),
});

const MAX_RECORD_BYTES = 256 * 1024;

function corrupt(file: string, why: string): DomainError {
  return new DomainError("conflict", "provider_sandbox_record_invalid", `A sandbox record is unreadable (${why}).`, { file });
}

/** Reads a record (never through a link); null when absent. */
export async function readRecord<T>(file: string, schema: z.ZodType<T>): Promise<T | null> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return null;
    throw corrupt(file, errnoOf(error) ?? "open failed");
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw corrupt(file, "not a regular file");
    if (stats.size > MAX_RECORD_BYTES) throw corrupt(file, "too large");
    let value: unknown;
    try {
      value = JSON.parse(await readFile(handle, "utf8"));
    } catch {
      throw corrupt(file, "not JSON");
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw corrupt(file, "unexpected content");
    return parsed.data;
  } finally {
    await handle.close();
  }
}

/** Creates `file` (never replacing anything, never through a link) with `text`, flushed. */
async function createFile(file: string, text: string): Promise<void> {
  const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes a record atomically; `exclusive` refuses to replace an existing one. */
export async function writeRecord(file: string, value: unknown, opts: { exclusive?: boolean } = {}): Promise<void> {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  if (opts.exclusive) return createFile(file, text);
  const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  await createFile(temporary, text);
  try {
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

export async function removeRecord(file: string): Promise<void> {
  await rm(file, { force: true });
}

export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return false;
    throw error;
  }
}

export async function readProcesses(file: string): Promise<ProcessRecord[]> {
  return (await readRecord(file, processesFile))?.processes ?? [];
}

/** Serializes read-modify-write of one sandbox's process list within this controller. */
const pending = new Map<string, Promise<unknown>>();

export function updateProcesses(file: string, change: (processes: ProcessRecord[]) => ProcessRecord[]): Promise<void> {
  const previous = pending.get(file) ?? Promise.resolve();
  const next = previous
    .catch(() => undefined)
    .then(async () => {
      const processes = change(await readProcesses(file));
      await writeRecord(file, { schema: "copyback.local-processes.v1", processes });
    });
  pending.set(file, next);
  void next.finally(() => {
    if (pending.get(file) === next) pending.delete(file);
  }).catch(() => undefined);
  return next;
}
