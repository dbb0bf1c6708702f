// POST /api/issues/:id/recovery-actions/retry-workspace-export (R-EX-2): after repairing the
// retained sandbox, ask for an export-only retry of the same run. `runtime:manage`. The admission
// comes with the recovery work; until then a valid, authorized request answers 501.
import { z } from "zod";
import { notImplemented } from "../responses";
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";

export const retryWorkspaceExportInput = z.strictObject({
  actionId: z.uuid(),
  runId: z.uuid(),
  repairNote: z.string().trim().min(1).max(20_000),
});

export const retryWorkspaceExportRoute = restRoute({
  method: "POST",
  path: "/api/issues/:id/recovery-actions/retry-workspace-export",
  permission: "runtime:manage",
  resource: issueFromPath,
  input: retryWorkspaceExportInput,
  handler: async () => notImplemented("Retrying a workspace export"),
});
