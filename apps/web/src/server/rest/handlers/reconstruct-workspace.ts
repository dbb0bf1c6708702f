// POST /api/issues/:id/recovery-actions/reconstruct-workspace (R-UI-3, R-RC-2): "Continue from
// saved sources" after confirmed destruction of the exact sandbox: the surviving attachments to
// use, a description of the missing work and the observed outcomes of external actions.
// `runtime:manage`. The admission (R-RC-2..R-RC-6) comes with the recovery work; until then a
// valid, authorized request answers 501.
import { reconstructWorkspaceBody } from "@copyback/core/recovery/operator/reconstruct-workspace";
import { notImplemented } from "../responses";
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";

export const reconstructWorkspaceInput = reconstructWorkspaceBody;

export const reconstructWorkspaceRoute = restRoute({
  method: "POST",
  path: "/api/issues/:id/recovery-actions/reconstruct-workspace",
  permission: "runtime:manage",
  resource: issueFromPath,
  input: reconstructWorkspaceBody,
  handler: async () => notImplemented("Continuing from saved sources"),
});
