// Reads the prepared workspace descriptor of a run back from its succeeded `workspace_prepare`
// operation (the latest one: a retried preparation supersedes earlier ones). Parsed with zod:
// a malformed descriptor grants nothing and is a typed failure, never a guess.
//
// R-FO-2: the descriptor is the merge baseline, not a proof of copyback (see copyback-proven.ts).
import { DomainError } from "../errors";
import type { DbOrTx } from "../runs/run-log";
import { preparedWorkspaceDescriptor, type PreparedWorkspaceDescriptor } from "../workspace/prepared-descriptor";
import type { CopybackBarrierKey } from "./copyback-proven";

export async function loadPreparedWorkspace(db: DbOrTx, key: CopybackBarrierKey): Promise<PreparedWorkspaceDescriptor> {
  const operation = await db.workspaceOperation.findFirst({
    where: { companyId: key.companyId, runId: key.runId, issueId: key.issueId, phase: "workspace_prepare", status: "succeeded" },
    orderBy: [{ finishedAt: "desc" }, { createdAt: "desc" }],
    select: { id: true, metadata: true },
  });
  if (!operation) {
    throw new DomainError("conflict", "prepared_workspace_missing", "The run has no prepared workspace to finalize against.");
  }
  const parsed = preparedWorkspaceDescriptor.safeParse(operation.metadata);
  if (!parsed.success) {
    throw new DomainError("conflict", "prepared_workspace_invalid", "The run's prepared workspace descriptor is malformed.", {
      operationId: operation.id,
    });
  }
  return parsed.data;
}
