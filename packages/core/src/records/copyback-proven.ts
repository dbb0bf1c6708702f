// THE barrier rule (DESIGN.md section 1, fences table): copyback is proven for a run when a
// `workspace_finalize` operation with status `succeeded` exists for that company, run and issue.
// Every caller (live finalization, reconciler, takeover, export retry) asks this one function.
//
// R-FO-2: nothing else counts. A succeeded `workspace_prepare` (the prepared workspace
// descriptor) is a baseline, never an export receipt.
import type { DbOrTx } from "./run-log";

export interface CopybackBarrierKey {
  companyId: string;
  runId: string;
  issueId: string;
}

export async function copybackProven(db: DbOrTx, key: CopybackBarrierKey): Promise<boolean> {
  const barrier = await db.workspaceOperation.findFirst({
    where: {
      companyId: key.companyId,
      runId: key.runId,
      issueId: key.issueId,
      phase: "workspace_finalize",
      status: "succeeded",
    },
    select: { id: true },
  });
  return barrier !== null;
}
