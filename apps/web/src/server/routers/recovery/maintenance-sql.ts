// The spec's maintenance fallback for older servers (NWF "Unverified copyback after controller
// replacement", R-ATT-5), verbatim with its four placeholders. The repository's copy that the
// database test runs is packages/db/test/fixtures/release-finalization-owner.sql; a unit test
// (test/recovery-guidance.test.ts) keeps this text identical to it. Shown only to
// `runtime:confirm_owner_stop` holders, under Recovery details, with the placeholders filled.
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

export interface MaintenanceSqlValues {
  companyId: string;
  runId: string;
  issueId: string;
  ownerToken: string;
}

/** Inside a SQL string literal a quote is doubled; the ids are uuids, the token is free text. */
function literal(value: string): string {
  return value.replaceAll("'", "''");
}

/** The template with the action's company, run, token and source issue filled in. */
export function maintenanceSql(values: MaintenanceSqlValues): string {
  return MAINTENANCE_SQL_TEMPLATE.replaceAll("<company-id>", literal(values.companyId))
    .replaceAll("<run-id>", literal(values.runId))
    .replaceAll("<issue-id>", literal(values.issueId))
    .replaceAll("<owner-token>", literal(values.ownerToken));
}
