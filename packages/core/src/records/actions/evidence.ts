// What the evidence of every file hold shares: the run and the exact sandbox the hold pins (its
// lease and the provider's allocation under the plugin recorded on the lease, R-EX-6), the one
// thing an operator recovers files from; and how evidence is read back (an unreadable document
// grants nothing, so it reads as none).
import { z } from "zod";

/** The zod fields of the run and its pinned sandbox, spread into each cause's evidence schema. */
export const pinnedSandboxFields = {
  runId: z.uuid(),
  leaseId: z.string().nullable(),
  providerLeaseId: z.string().nullable(),
  pluginId: z.string().nullable(),
};
export type PinnedSandbox = { runId: string; leaseId: string | null; providerLeaseId: string | null; pluginId: string | null };

/** The run and pinned sandbox of an opener's input, as its evidence records them (nothing else of the input). */
export function pinnedSandboxOf(input: PinnedSandbox): PinnedSandbox {
  return { runId: input.runId, leaseId: input.leaseId, providerLeaseId: input.providerLeaseId, pluginId: input.pluginId };
}

/** The hold's lease as a list, so the lease-holds query keeps it out of reuse by evidence too. */
export function leaseIdsOf(leaseId: string | null): string[] {
  return leaseId ? [leaseId] : [];
}

/** The reader of one evidence schema: the parsed document, or null for anything it refuses. */
export function evidenceReader<T>(schema: z.ZodType<T>): (evidence: unknown) => T | null {
  return (evidence) => {
    const parsed = schema.safeParse(evidence);
    return parsed.success ? parsed.data : null;
  };
}
