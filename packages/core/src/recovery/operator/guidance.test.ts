// The operator guidance (Recovery details, `copyback recovery show`), pure: the spec's maintenance SQL (verbatim, its four
// placeholders filled) and the exact attestation call.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { attestOwnerStopBody } from "./attest-owner-stop";
import {
  MAINTENANCE_SQL_TEMPLATE,
  MALFORMED_RECEIPT_MAINTENANCE_SQL_TEMPLATE,
  REPAIR_NOTE_PLACEHOLDER,
  STOP_EVIDENCE_PLACEHOLDER,
  attestationCall,
  exportRetryCall,
  fileHoldResolveCall,
  maintenanceSql,
} from "./guidance";
import { resolveRecoveryActionBody } from "./resolve-recovery-action";
import { retryWorkspaceExportBody } from "./retry-workspace-export";

const COMPANY = "7d1c8f2e-3b4a-4c5d-8e6f-0a1b2c3d4e5f";
const RUN = "2f6e9a10-1111-4222-8333-944455556666";
const ISSUE = "c0ffee00-aaaa-4bbb-8ccc-dddddddddddd";
const ACTION = "0badf00d-1234-4567-89ab-cdef01234567";

describe("the maintenance fallback SQL", () => {
  it("R-ATT-5: is the spec's transaction verbatim (the repository copy the database test runs on the real schema)", () => {
    const fixture = readFileSync(new URL("../../../../db/test/fixtures/release-finalization-owner.sql", import.meta.url), "utf8");
    expect(MAINTENANCE_SQL_TEMPLATE).toBe(fixture);
  });

  it("R-ATT-5: fills the action's company, run, token and source issue into all four placeholders", () => {
    const sql = maintenanceSql({ companyId: COMPANY, runId: RUN, issueId: ISSUE, ownerToken: "tok-abc_123" });
    expect(sql).not.toMatch(/<(company-id|run-id|issue-id|owner-token)>/);
    expect(sql).toContain(`'native-workspace-finalization:${COMPANY}:${RUN}', 0));`);
    expect(sql).toContain(`WHERE company_id = '${COMPANY}'::uuid`);
    expect(sql).toContain(`AND id = '${RUN}'::uuid`);
    expect(sql).toContain(`AND native_issue_id = '${ISSUE}'::uuid`);
    expect(sql).toContain(`->>'token' = 'tok-abc_123'`);
    // Everything else is the template's text.
    expect(sql.replaceAll(COMPANY, "<company-id>").replaceAll(RUN, "<run-id>").replaceAll(ISSUE, "<issue-id>").replace("tok-abc_123", "<owner-token>")).toBe(MAINTENANCE_SQL_TEMPLATE);
  });

  it("R-ATT-5: a malformed receipt's form differs from the spec's only in the token line, which compares the stored receipt's sha256", () => {
    const sha = "f".repeat(64);
    const sql = maintenanceSql({ companyId: COMPANY, runId: RUN, issueId: ISSUE, receiptSha256: sha });
    expect(sql).not.toMatch(/<(company-id|run-id|issue-id|owner-token|receipt-sha256)>/);
    expect(sql).not.toContain("->>'token'");
    expect(sql).toContain(`::text, 'UTF8')), 'hex') = '${sha}'`);
    const spec = MAINTENANCE_SQL_TEMPLATE.split("\n");
    const malformed = MALFORMED_RECEIPT_MAINTENANCE_SQL_TEMPLATE.split("\n");
    expect(malformed.length).toBe(spec.length);
    expect(malformed.filter((line, i) => line !== spec[i])).toEqual([
      "  AND encode(sha256(convert_to((runner_profile_json->'nativeWorkspaceFinalizationOwner')::text, 'UTF8')), 'hex') = '<receipt-sha256>'",
    ]);
  });

  it("keeps a quote in a token inside its string literal", () => {
    const sql = maintenanceSql({ companyId: COMPANY, runId: RUN, issueId: ISSUE, ownerToken: "it's" });
    expect(sql).toContain(`->>'token' = 'it''s'`);
  });
});

/** What a POSIX shell makes of one word built from single-quoted parts and \' escapes. */
function unquoteShellWord(word: string): string {
  let out = "";
  let i = 0;
  while (i < word.length) {
    if (word[i] === "'") {
      const end = word.indexOf("'", i + 1);
      out += word.slice(i + 1, end);
      i = end + 1;
    } else if (word[i] === "\\") {
      out += word[i + 1];
      i += 2;
    } else {
      out += word[i];
      i += 1;
    }
  }
  return out;
}

describe("the attestation API call", () => {
  const input = { origin: "https://copyback.example.com", issueId: ISSUE, actionId: ACTION, runId: RUN, ownerToken: "tok-abc_123" };

  it("R-ATT-1: posts the documented body, prefilled, to the real path of the console", () => {
    const call = attestationCall(input);
    expect(call.url).toBe(`https://copyback.example.com/api/issues/${ISSUE}/recovery-actions/resume-workspace-finalization`);
    expect(call.body).toEqual({ actionId: ACTION, runId: RUN, ownerToken: "tok-abc_123", controllerAndCopybackStopped: true, stopEvidence: STOP_EVIDENCE_PLACEHOLDER });
    // Exactly what the route accepts, once the operator writes the evidence.
    expect(attestOwnerStopBody.safeParse(call.body).success).toBe(true);
  });

  it("R-ATT-1: the curl line sends that body (a token with a quote survives the shell)", () => {
    for (const ownerToken of ["tok-abc_123", "it's"]) {
      const call = attestationCall({ ...input, ownerToken });
      const lines = call.curl.split("\n");
      expect(lines[0]).toBe(`curl -X POST "${call.url}" \\`);
      expect(call.curl).toContain(`-H "Authorization: Bearer $COPYBACK_BOARD_KEY" -H "content-type: application/json"`);
      const data = call.curl.slice(call.curl.indexOf("-d ") + 3);
      expect(JSON.parse(unquoteShellWord(data))).toEqual(call.body);
    }
  });

  it("names the console's address as a shell variable when the request did not say it", () => {
    expect(attestationCall({ ...input, origin: null }).url).toBe(`$COPYBACK_URL/api/issues/${ISSUE}/recovery-actions/resume-workspace-finalization`);
  });
});

describe("the CLI form of the attestation", () => {
  it("R-ATT-1: names the action, run and token and the explicit stop flag", () => {
    const call = attestationCall({ origin: null, issueId: ISSUE, actionId: ACTION, runId: RUN, ownerToken: "tok-abc_123" });
    expect(call.cli).toContain(`--action ${ACTION} --run ${RUN}`);
    expect(call.cli).toContain(`--token 'tok-abc_123'`);
    expect(call.cli).toContain("--controller-and-copyback-stopped");
    expect(call.path).toBe(`/api/issues/${ISSUE}/recovery-actions/resume-workspace-finalization`);
  });
});

describe("the export-only retry call", () => {
  const input = { origin: "https://copyback.example.com", issueId: ISSUE, actionId: ACTION, runId: RUN };

  it("R-EX-2: posts { actionId, runId, repairNote } to the retry-workspace-export route, prefilled, exactly what the route accepts once the note is written", () => {
    const call = exportRetryCall(input);
    expect(call.method).toBe("POST");
    expect(call.path).toBe(`/api/issues/${ISSUE}/recovery-actions/retry-workspace-export`);
    expect(call.url).toBe(`https://copyback.example.com/api/issues/${ISSUE}/recovery-actions/retry-workspace-export`);
    expect(call.body).toEqual({ actionId: ACTION, runId: RUN, repairNote: REPAIR_NOTE_PLACEHOLDER });
    expect(retryWorkspaceExportBody.safeParse(call.body).success).toBe(true);
    // Nothing but the three documented fields: the route is strict.
    expect(retryWorkspaceExportBody.safeParse({ ...call.body, extra: 1 }).success).toBe(false);
  });

  it("R-EX-2: the curl line sends that body with a board key", () => {
    const call = exportRetryCall(input);
    expect(call.curl.split("\n")[0]).toBe(`curl -X POST "${call.url}" \\`);
    expect(call.curl).toContain(`-H "Authorization: Bearer $COPYBACK_BOARD_KEY" -H "content-type: application/json"`);
    const data = call.curl.slice(call.curl.indexOf("-d ") + 3);
    expect(JSON.parse(unquoteShellWord(data))).toEqual(call.body);
    expect(exportRetryCall({ ...input, origin: null }).url).toBe(`$COPYBACK_URL/api/issues/${ISSUE}/recovery-actions/retry-workspace-export`);
  });

  it("R-EX-2: the CLI form is copyback recovery retry-export --issue --action --run --note", () => {
    const call = exportRetryCall(input);
    expect(call.cli.split("\n")[0]).toBe("copyback recovery retry-export \\");
    expect(call.cli).toContain(`--issue ${ISSUE} --action ${ACTION} --run ${RUN}`);
    const note = call.cli.slice(call.cli.indexOf("--note ") + 7);
    expect(unquoteShellWord(note)).toBe(REPAIR_NOTE_PLACEHOLDER);
  });
});

describe("a file hold's resolution path", () => {
  const LEASE = "3a7e9a10-1111-4222-8333-944455556666";
  const call = fileHoldResolveCall({ origin: "https://c.example", issueId: ISSUE, actionId: ACTION, runId: RUN, leaseId: LEASE, sourceIssueStatus: "blocked", runStatus: "failed" });

  it("R-UI-2: the restored call posts the resolve body, prefilled with the action, the task's status, the run and its lease, to the real path", () => {
    expect(call.url).toBe(`https://c.example/api/issues/${ISSUE}/recovery-actions/resolve`);
    expect(call.body).toMatchObject({ actionId: ACTION, outcome: "restored", sourceIssueStatus: "blocked", executionReconciliation: { runId: RUN, leaseId: LEASE, runStatus: "failed", noExternalActionsPerformed: false } });
    expect(resolveRecoveryActionBody.safeParse(call.body).success).toBe(true);
    expect(call.curl).toContain(JSON.stringify(call.body));
  });

  it("R-UI-2: the CLI forms name the same action, status, run and lease: restored with the evidence, or a disposition with a note", () => {
    const source = `--action ${ACTION} --source-status blocked --run ${RUN} --lease ${LEASE} --run-status failed`;
    expect(call.cli).toContain("copyback recovery resolve");
    expect(call.cli).toContain(source);
    expect(call.cli).toMatch(/--stop-evidence '.+' --recovered-files '.+'/);
    expect(call.dispositionCli).toContain("--outcome false_positive");
    expect(call.dispositionCli).toContain(source);
    expect(call.dispositionCli).toMatch(/--note '.+'/);
    const noLease = fileHoldResolveCall({ origin: null, issueId: ISSUE, actionId: ACTION, runId: RUN, leaseId: null, sourceIssueStatus: "blocked", runStatus: "failed" });
    expect(noLease.cli).not.toContain("--lease");
    expect(noLease.url).toBe(`$COPYBACK_URL/api/issues/${ISSUE}/recovery-actions/resolve`);
  });
});
