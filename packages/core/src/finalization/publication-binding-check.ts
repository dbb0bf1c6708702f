// R-RW-4: "publication repeats the checks". Right before the merge's first host write (under the
// directory-merge lock, after the export), THE binding check (binding.ts) is asked again: a task
// closed, reassigned or taken by a newer execution since the finalization was admitted (live, or
// by attestation, takeover or export-only retry) never receives the run's old files.
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { DomainError } from "../errors";
import { checkRunBinding, loadRunBinding } from "./binding";
import type { OwnershipKey } from "./finalization-owner";
import { PUBLICATION_UNBOUND_CODE } from "./finalize-errors";

/**
 * The snapshot is read under short row locks in its own transaction, committed before any host
 * I/O (row locks are never held across copyback I/O). A refusal is final: nothing was written;
 * it throws PUBLICATION_UNBOUND_CODE with the binding's refusal code as its reason.
 */
export async function assertStillBound(db: PrismaClient, key: OwnershipKey): Promise<void> {
  const snapshot = await withTransaction(db, (tx) => loadRunBinding(tx, key));
  const decision = checkRunBinding(snapshot, ["workspace_finalizing"]);
  if (decision.kind === "reject") {
    throw new DomainError("conflict", PUBLICATION_UNBOUND_CODE, `The run no longer owns its task; nothing was copied back: ${decision.message}`, { reason: decision.code });
  }
}
