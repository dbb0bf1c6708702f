// POST /api/issues/:id/recovery-actions/reconstruct-workspace (R-UI-3, R-RC-2): "Continue from
// saved sources" after confirmed destruction of the exact sandbox: the surviving attachments to
// use, a description of the missing work and the observed outcomes of external actions.
// `runtime:manage`. The admission (R-RC-2..R-RC-6) comes with the recovery work; until then a
// valid, authorized request answers 501.
import { z } from "zod";
import { notImplemented } from "../responses";
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";

export const externalActionOutcome = z.strictObject({
  action: z.string().trim().min(1).max(2_000),
  outcome: z.enum(["performed", "not_performed", "unknown"]),
  evidence: z.string().trim().max(20_000).optional(),
});

export const reconstructWorkspaceInput = z.strictObject({
  actionId: z.uuid(),
  /** The run whose workspace was lost. */
  sourceRunId: z.uuid(),
  /** The exact destroyed lease (R-RC-1). */
  leaseId: z.uuid(),
  attachmentIds: z.array(z.uuid()).max(500),
  description: z.string().trim().min(1).max(20_000),
  externalActionOutcomes: z.array(externalActionOutcome).max(200),
  /** The task status version the operator saw (R-RC-2). */
  sourceStatusVersion: z.number().int().min(0),
  /** Idempotency key: repeated submissions adopt the first intent (R-RC-3). */
  requestId: z.string().trim().min(1).max(200),
});

export const reconstructWorkspaceRoute = restRoute({
  method: "POST",
  path: "/api/issues/:id/recovery-actions/reconstruct-workspace",
  permission: "runtime:manage",
  resource: issueFromPath,
  input: reconstructWorkspaceInput,
  handler: async () => notImplemented("Continuing from saved sources"),
});
