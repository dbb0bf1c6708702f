// The exact calls that attest an unverified copyback owner's stop (R-ATT-1), prefilled with the
// action id, run id and owner token: the REST call (a key with `runtime:confirm_owner_stop`,
// R-ATT-2) and the CLI command (an instance operator with database access). Only the operator's
// stop evidence is left to fill in: it is what the deployment platform shows, never guessed.
import type { AttestOwnerStopBody } from "../../recovery/operator/attest-owner-stop";

export const RESUME_FINALIZATION_PATH = (issueId: string) =>
  `/api/issues/${issueId}/recovery-actions/resume-workspace-finalization`;

export const EVIDENCE_PLACEHOLDER =
  "<what the deployment platform shows: the controller process and its tar/git children have exited>";

export interface AttestCall {
  method: "POST";
  path: string;
  body: AttestOwnerStopBody;
  curl: string;
  cli: string;
}

export function attestCall(input: {
  issueId: string;
  actionId: string;
  runId: string;
  ownerToken: string;
}): AttestCall {
  const body: AttestOwnerStopBody = {
    actionId: input.actionId,
    runId: input.runId,
    ownerToken: input.ownerToken,
    controllerAndCopybackStopped: true,
    stopEvidence: EVIDENCE_PLACEHOLDER,
  };
  const path = RESUME_FINALIZATION_PATH(input.issueId);
  const curl = [
    `curl -X POST "$COPYBACK_URL${path}" \\`,
    `  -H "Authorization: Bearer $COPYBACK_API_KEY" -H "content-type: application/json" \\`,
    `  -d ${shellQuote(JSON.stringify(body))}`,
  ].join("\n");
  const cli = [
    "copyback recovery attest \\",
    `  --action ${input.actionId} --run ${input.runId} \\`,
    `  --token ${shellQuote(input.ownerToken)} \\`,
    `  --controller-and-copyback-stopped --evidence ${shellQuote(EVIDENCE_PLACEHOLDER)}`,
  ].join("\n");
  return { method: "POST", path, body, curl, cli };
}

/** One POSIX shell word: single quotes, an embedded ' as '\''. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
