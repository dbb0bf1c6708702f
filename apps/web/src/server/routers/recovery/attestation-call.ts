// The exact operator API call of an unverified-owner hold (R-ATT-1), prefilled with the action's
// ids and owner token, for `runtime:confirm_owner_stop` holders only (Recovery details). The stop
// evidence stays a placeholder: only the operator, after checking the deployment platform, can
// write it (the console never certifies a stop, R-UI-1).

export const STOP_EVIDENCE_PLACEHOLDER = "<deployment-platform evidence for this controller and its children>";

export function resumeWorkspaceFinalizationPath(issueId: string): string {
  return `/api/issues/${issueId}/recovery-actions/resume-workspace-finalization`;
}

export interface AttestationCallInput {
  /** The console's origin as the caller reached it; null when unknown (then `$COPYBACK_URL`). */
  origin: string | null;
  issueId: string;
  actionId: string;
  runId: string;
  ownerToken: string;
}

export interface AttestationCall {
  method: "POST";
  url: string;
  body: {
    actionId: string;
    runId: string;
    ownerToken: string;
    controllerAndCopybackStopped: true;
    stopEvidence: string;
  };
  /** A curl command line, ready to paste once the placeholder and the key are in place. */
  curl: string;
}

/** For a single-quoted shell word: close the quote, an escaped quote, reopen. */
function shellSingleQuoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

export function attestationCall(input: AttestationCallInput): AttestationCall {
  const path = resumeWorkspaceFinalizationPath(input.issueId);
  const url = `${input.origin ?? "$COPYBACK_URL"}${path}`;
  const body = {
    actionId: input.actionId,
    runId: input.runId,
    ownerToken: input.ownerToken,
    controllerAndCopybackStopped: true as const,
    stopEvidence: STOP_EVIDENCE_PLACEHOLDER,
  };
  const curl = [
    `curl -X POST "${url}" \\`,
    `  -H "Authorization: Bearer $COPYBACK_BOARD_KEY" -H "content-type: application/json" \\`,
    `  -d ${shellSingleQuoted(JSON.stringify(body, null, 2))}`,
  ].join("\n");
  return { method: "POST", url, body, curl };
}
