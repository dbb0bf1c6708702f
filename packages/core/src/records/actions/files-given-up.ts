// What a Discard records on each open recovery action that needed the discarded sandbox's files
// (R-FO-5): the files were given up, by whom, why, and the destruction receipt.
import type { TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import { filesGivenUpNextAction } from "../causes";
import { OPEN_RECOVERY_ACTION_STATUSES_SQL } from "./open-statuses-sql";

export const FILES_GIVEN_UP_SCHEMA = "copyback.files-given-up.v1";

/** What a Discard records on each action it acknowledged (read back for the task's notice and the form). */
const filesGivenUpRecord = z.object({
  schema: z.literal(FILES_GIVEN_UP_SCHEMA),
  leaseId: z.string(),
  by: z.object({ type: z.string(), id: z.string().nullable() }),
  reason: z.string(),
  at: z.string(),
});
export type FilesGivenUp = z.infer<typeof filesGivenUpRecord>;

export function readFilesGivenUp(evidence: unknown): FilesGivenUp | null {
  if (typeof evidence !== "object" || evidence === null || Array.isArray(evidence)) return null;
  const parsed = filesGivenUpRecord.safeParse((evidence as Record<string, unknown>).filesGivenUp);
  return parsed.success ? parsed.data : null;
}

/**
 * An operator discarded the retained sandbox these actions needed. Each one records that its
 * files were given up, by whom, why and the destruction receipt; it stays open (what it asked for
 * may still be done another way, e.g. reconstruction, which needs the receipt), and its
 * instructions now say that nothing is left to recover (filesGivenUpNextAction).
 */
export async function recordFilesGivenUp(
  tx: TransactionClient,
  input: { actionIds: readonly string[]; leaseId: string; providerLeaseId: string | null; by: { type: string; id: string | null }; reason: string; receipt: unknown },
): Promise<number> {
  if (input.actionIds.length === 0) return 0;
  const at = new Date().toISOString();
  const record = { schema: FILES_GIVEN_UP_SCHEMA, leaseId: input.leaseId, by: input.by, reason: input.reason, receipt: input.receipt, at };
  const nextAction = filesGivenUpNextAction({ providerLeaseId: input.providerLeaseId, byType: input.by.type, at, reason: input.reason });
  return tx.$executeRaw`
    UPDATE issue_recovery_actions
    SET evidence = evidence || jsonb_build_object('filesGivenUp', ${JSON.stringify(record)}::jsonb), next_action = ${nextAction}, updated_at = now()
    WHERE id = ANY(${[...input.actionIds]}::uuid[]) AND status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL}`;
}
