// POST /api/issues/:id/recovery-actions/resume-workspace-finalization (R-ATT-1, R-ATT-2): an
// operator's attestation that an unverified copyback owner's controller and its copyback
// subprocesses have stopped. Only `runtime:confirm_owner_stop` may send it: active owners and
// administrators, the trusted local board and instance administrators; runtime managers and
// agents are refused (403). Admission itself (R-ATT-3) comes with the recovery work; until then
// an authorized, valid request answers 501 not_implemented and changes nothing.
import { z } from "zod";
import { notImplemented } from "../responses";
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";

export const resumeWorkspaceFinalizationInput = z.strictObject({
  actionId: z.uuid(),
  runId: z.uuid(),
  ownerToken: z.string().trim().min(1).max(500),
  // R-ATT-1: the attestation is explicit; anything but `true` is not one.
  controllerAndCopybackStopped: z.literal(true),
  stopEvidence: z.string().trim().min(1).max(20_000),
});

export const resumeWorkspaceFinalizationRoute = restRoute({
  method: "POST",
  path: "/api/issues/:id/recovery-actions/resume-workspace-finalization",
  permission: "runtime:confirm_owner_stop",
  resource: issueFromPath,
  input: resumeWorkspaceFinalizationInput,
  handler: async () => notImplemented("Resuming workspace finalization"),
});
