// A process identity as the records store it (R-OWN-12: a PID is never trusted alone): the PID,
// its /proc start time (decimal clock ticks), the boot id and the host. The one schema every
// record that names a process parses it with: the agent process on a run, the preparation's
// recovery claim, the local sandbox's process records. A record that fails it names no process
// anyone could probe, and is treated as absent (or malformed) by its reader.
import { z } from "zod";
import type { ProcessIdentity } from "../process/process-identity";

export const processIdentityFields = {
  pid: z.number().int().positive(),
  /** /proc/<pid>/stat field 22 as a decimal string (it may exceed 2^53). */
  startTime: z.string().regex(/^\d+$/),
  bootId: z.string().min(1),
  host: z.string().min(1),
};

export const processIdentityRecord = z.object(processIdentityFields);

/** The identity in `value`, or null when it is missing or malformed. Extra keys are ignored. */
export function parseProcessIdentity(value: unknown): ProcessIdentity | null {
  const parsed = processIdentityRecord.safeParse(value);
  return parsed.success ? { pid: parsed.data.pid, startTime: parsed.data.startTime, bootId: parsed.data.bootId, host: parsed.data.host } : null;
}
