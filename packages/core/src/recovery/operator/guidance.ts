// What an operator is shown to resolve an unverified-owner hold, in one place for the console's
// Recovery details and the `copyback recovery show` command:
//   - the exact attestation call (R-ATT-1), prefilled with the action id, run id and owner token,
//     as a REST call (a board key with `runtime:confirm_owner_stop`, R-ATT-2) and as the CLI
//     command (an instance operator with database access). The stop evidence stays a placeholder:
//     only the operator, after checking the deployment platform, can write it;
//   - the spec's maintenance SQL fallback for older servers (R-ATT-5), verbatim with its four
//     placeholders filled. packages/db/test/fixtures/release-finalization-owner.sql is the copy
//     the database test runs on the real schema (and compares with the spec where it is present);
//     guidance.test.ts keeps this text identical to it. A malformed receipt has no token to
//     compare: its form compares the stored receipt's sha256 instead (the same
//     expression as finalization-owner.ts receiptSha256Sql), everything else unchanged.

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
  path: string;
  url: string;
  body: { actionId: string; runId: string; ownerToken: string; controllerAndCopybackStopped: true; stopEvidence: string };
  /** A curl command line, ready to paste once the placeholder and the key are in place. */
  curl: string;
  /** The same attestation through the CLI. */
  cli: string;
}

/** One POSIX shell word: single quotes, an embedded ' as '\''. */
export function shellQuote(text: string): string {
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
    `  -d ${shellQuote(JSON.stringify(body))}`,
  ].join("\n");
  const cli = [
    "copyback recovery attest \\",
    `  --action ${input.actionId} --run ${input.runId} \\`,
    `  --token ${shellQuote(input.ownerToken)} \\`,
    `  --controller-and-copyback-stopped --evidence ${shellQuote(STOP_EVIDENCE_PLACEHOLDER)}`,
  ].join("\n");
  return { method: "POST", path, url, body, curl, cli };
}

export const MAINTENANCE_SQL_TEMPLATE = `BEGIN;
SELECT pg_advisory_xact_lock(hashtextextended(
  'native-workspace-finalization:<company-id>:<run-id>', 0));
UPDATE heartbeat_runs
SET runner_profile_json = runner_profile_json - 'nativeWorkspaceFinalizationOwner'
WHERE company_id = '<company-id>'::uuid
  AND id = '<run-id>'::uuid
  AND native_issue_id = '<issue-id>'::uuid
  AND runtime_mode = 'native'
  AND runner_profile_json->'nativeWorkspaceFinalizationOwner'->>'token' = '<owner-token>'
RETURNING id;
COMMIT;
`;

const TOKEN_CONDITION = "  AND runner_profile_json->'nativeWorkspaceFinalizationOwner'->>'token' = '<owner-token>'\n";

/**
 * The maintenance SQL for a hold whose receipt is malformed (no token to compare): the
 * token's line compares the stored receipt's sha256 (the hold's receiptSha256) instead. A zero-row
 * update means the receipt changed since the hold named it: inspect again.
 */
export const MALFORMED_RECEIPT_MAINTENANCE_SQL_TEMPLATE = MAINTENANCE_SQL_TEMPLATE.replace(
  TOKEN_CONDITION,
  "  AND encode(sha256(convert_to((runner_profile_json->'nativeWorkspaceFinalizationOwner')::text, 'UTF8')), 'hex') = '<receipt-sha256>'\n",
);

export type MaintenanceSqlValues = { companyId: string; runId: string; issueId: string } & ({ ownerToken: string } | { receiptSha256: string });

/** Inside a SQL string literal a quote is doubled; the ids are uuids, the token is free text. */
function literal(value: string): string {
  return value.replaceAll("'", "''");
}

/** The template with the action's company, run, token (or malformed receipt's sha256) and source issue filled in. */
export function maintenanceSql(values: MaintenanceSqlValues): string {
  const filled = "ownerToken" in values
    ? MAINTENANCE_SQL_TEMPLATE.replaceAll("<owner-token>", literal(values.ownerToken))
    : MALFORMED_RECEIPT_MAINTENANCE_SQL_TEMPLATE.replaceAll("<receipt-sha256>", literal(values.receiptSha256));
  return filled.replaceAll("<company-id>", literal(values.companyId))
    .replaceAll("<run-id>", literal(values.runId))
    .replaceAll("<issue-id>", literal(values.issueId));
}

// The export-only retry (R-EX-2), for the exhausted-export hold: the exact REST call (a board key
// with `runtime:manage`) and its CLI form, prefilled with the task, action and run. The repair note
// stays a placeholder: only the operator, after repairing the provider's transport without
// touching the sandbox's files, can write it.

export const REPAIR_NOTE_PLACEHOLDER = "<what you repaired and how the sandbox's files were preserved>";

export function retryWorkspaceExportPath(issueId: string): string {
  return `/api/issues/${issueId}/recovery-actions/retry-workspace-export`;
}

export interface ExportRetryCallInput {
  /** The console's origin as the caller reached it; null when unknown (then `$COPYBACK_URL`). */
  origin: string | null;
  issueId: string;
  actionId: string;
  runId: string;
}

export interface ExportRetryCall {
  method: "POST";
  path: string;
  url: string;
  body: { actionId: string; runId: string; repairNote: string };
  /** A curl command line, ready to paste once the note and the key are in place. */
  curl: string;
  /** The same request through the CLI. */
  cli: string;
}

export function exportRetryCall(input: ExportRetryCallInput): ExportRetryCall {
  const path = retryWorkspaceExportPath(input.issueId);
  const url = `${input.origin ?? "$COPYBACK_URL"}${path}`;
  const body = { actionId: input.actionId, runId: input.runId, repairNote: REPAIR_NOTE_PLACEHOLDER };
  const curl = [
    `curl -X POST "${url}" \\`,
    `  -H "Authorization: Bearer $COPYBACK_BOARD_KEY" -H "content-type: application/json" \\`,
    `  -d ${shellQuote(JSON.stringify(body))}`,
  ].join("\n");
  const cli = [
    "copyback recovery retry-export \\",
    `  --issue ${input.issueId} --action ${input.actionId} --run ${input.runId} \\`,
    `  --note ${shellQuote(REPAIR_NOTE_PLACEHOLDER)}`,
  ].join("\n");
  return { method: "POST", path, url, body, curl, cli };
}

// The resolution path of a file hold (R-RR-5, R-FO-5; R-EX-4, R-UI-2 for the copyback-failed
// hold): the guarded resolve call, prefilled with the task, action, its recorded run and lease, the
// task's status now (it must be sent back unchanged) and the run's status, as a REST call (a board
// key with `runtime:manage`) and as the CLI command; and the deliberate dispositions (false_positive
// or cancelled, with a note). The evidence and the note stay placeholders: only the operator, once
// cleanup confirmed the exact allocation stopped and the files are recovered, can write them.

export const RECOVERED_FILES_PLACEHOLDER = "<which files you recovered, and where>";
export const RESOLVE_STOP_EVIDENCE_PLACEHOLDER = "<how you verified the exact allocation stopped (its stop receipt)>";
export const DISPOSITION_NOTE_PLACEHOLDER = "<why nothing is to be recovered>";

export function resolveRecoveryActionPath(issueId: string): string {
  return `/api/issues/${issueId}/recovery-actions/resolve`;
}

export interface FileHoldResolveCallInput {
  /** The console's origin as the caller reached it; null when unknown (then `$COPYBACK_URL`). */
  origin: string | null;
  issueId: string;
  actionId: string;
  runId: string;
  leaseId: string | null;
  /** The task's status now (sent back unchanged: R-RR-5). */
  sourceIssueStatus: string;
  runStatus: string;
}

export interface FileHoldResolveCall {
  method: "POST";
  path: string;
  url: string;
  /** The "restored" request (resolveRecoveryActionBody), evidence as placeholders. */
  body: {
    actionId: string;
    outcome: "restored";
    sourceIssueStatus: string;
    executionReconciliation: { runId: string; leaseId: string | null; runStatus: string; noExternalActionsPerformed: false };
    workspaceRepairEvidence: { stopEvidence: string; recoveredFiles: string };
  };
  curl: string;
  /** The same "restored" request through the CLI. */
  cli: string;
  /** A deliberate board disposition through the CLI (false_positive shown; cancelled alike). */
  dispositionCli: string;
}

export function fileHoldResolveCall(input: FileHoldResolveCallInput): FileHoldResolveCall {
  const path = resolveRecoveryActionPath(input.issueId);
  const url = `${input.origin ?? "$COPYBACK_URL"}${path}`;
  const executionReconciliation = { runId: input.runId, leaseId: input.leaseId, runStatus: input.runStatus, noExternalActionsPerformed: false as const };
  const body = {
    actionId: input.actionId,
    outcome: "restored" as const,
    sourceIssueStatus: input.sourceIssueStatus,
    executionReconciliation,
    workspaceRepairEvidence: { stopEvidence: RESOLVE_STOP_EVIDENCE_PLACEHOLDER, recoveredFiles: RECOVERED_FILES_PLACEHOLDER },
  };
  const curl = [
    `curl -X POST "${url}" \\`,
    `  -H "Authorization: Bearer $COPYBACK_BOARD_KEY" -H "content-type: application/json" \\`,
    `  -d ${shellQuote(JSON.stringify(body))}`,
  ].join("\n");
  const source = `--source-status ${input.sourceIssueStatus} --run ${input.runId}${input.leaseId ? ` --lease ${input.leaseId}` : ""} --run-status ${input.runStatus}`;
  const cli = [
    "copyback recovery resolve \\",
    `  --action ${input.actionId} ${source} \\`,
    `  --stop-evidence ${shellQuote(RESOLVE_STOP_EVIDENCE_PLACEHOLDER)} --recovered-files ${shellQuote(RECOVERED_FILES_PLACEHOLDER)}`,
  ].join("\n");
  const dispositionCli = [
    "copyback recovery resolve --outcome false_positive \\",
    `  --action ${input.actionId} ${source} \\`,
    `  --note ${shellQuote(DISPOSITION_NOTE_PLACEHOLDER)}`,
  ].join("\n");
  return { method: "POST", path, url, body, curl, cli, dispositionCli };
}
