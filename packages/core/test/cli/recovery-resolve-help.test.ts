// `copyback recovery resolve --help` against what the command really does: every cause
// the resolution policy admits, every cause it sends elsewhere and the evidence each outcome needs
// are found here by asking the policy and the command themselves, never by reading the table the
// help is printed from, so a cause added to the policy without the help fails this test.
import { describe, expect, it } from "vitest";
import { STOP_RECEIPT_SCHEMA } from "../../src/leases/lease-metadata";
import { RETAINED_SOURCE_SCHEMA } from "../../src/leases/retained-source";
import * as causes from "../../src/records/causes";
import { decideResolve, type ResolveSnapshot } from "../../src/recovery/policies/decide-resolve";
import { HISTORICAL_UNSAFE_ACTION_CAUSE } from "../../src/recovery/policies/decide-unsafe-replay";
import { EXIT } from "../../src/cli/exit-codes";
import { parseJson, runCli } from "./helpers";

const C = "00000000-0000-4000-8000-00000000000c";
const R = "00000000-0000-4000-8000-00000000000a";
const L = "00000000-0000-4000-8000-000000000003";
const A = "00000000-0000-4000-8000-000000000001";
const at = "2026-12-01T10:00:00.000Z";
const receipt = { schema: STOP_RECEIPT_SCHEMA, method: "environmentStopLease", requestId: A, pluginId: "builtin.local", providerLeaseId: "sb-1", stoppedAt: at };
const retained = { schema: RETAINED_SOURCE_SCHEMA, companyId: C, runId: R, leaseId: L, providerLeaseId: "sb-1", pluginId: "builtin.local", originalPolicy: "ephemeral", reason: "legacy_copyback_failed", recordedAt: at };

/** A "restored" request that every file hold admits: a failed run, its released lease with a confirmed stop receipt. */
function snapshot(cause: string, opts: { retainedSource: boolean }): ResolveSnapshot {
  return {
    request: {
      outcome: "restored",
      sourceIssueStatus: "blocked",
      executionReconciliation: { runId: R, leaseId: L, runStatus: "failed", noExternalActionsPerformed: false },
      workspaceRepairEvidence: { stopEvidence: "stopped", recoveredFiles: "a.ts" },
    },
    action: { id: A, cause, status: "active", outcome: null, issueId: "i1", source: { runId: R, leaseId: L, providerLeaseId: "sb-1", pluginId: "builtin.local" } },
    issue: { id: "i1", status: "blocked" },
    run: { id: R, issueId: "i1", status: "failed", runtimeMode: "native", runnerProfile: {} },
    lease: { id: L, runId: R, providerLeaseId: "sb-1", pluginId: "builtin.local", status: "released", metadata: { sandboxStopAndRetainReceipt: receipt, ...(opts.retainedSource ? { retainedSource: retained } : {}) } },
  };
}

/** Every recovery cause the code names: the *_CAUSE constants of causes.ts and the historical unsafe-archive cause. */
const ALL_CAUSES = [
  ...Object.entries(causes)
    .filter(([name, value]) => name.endsWith("_CAUSE") && typeof value === "string")
    .map(([, value]) => value as string),
  HISTORICAL_UNSAFE_ACTION_CAUSE,
];

const NOT_HERE = new Set(["action_not_resolvable", "hold_requires_attestation", "hold_requires_export_retry"]);
const ELSEWHERE: Record<string, string> = { hold_requires_attestation: "copyback recovery attest", hold_requires_export_retry: "copyback recovery retry-export" };

async function help(): Promise<string[]> {
  const run = await runCli(["recovery", "resolve", "--help"]);
  expect(run.code).toBe(EXIT.ok);
  return run.stdout.split("\n");
}

const lineOf = (lines: string[], word: string) => lines.find((line) => line.includes(word)) ?? "";

describe("copyback recovery resolve --help", () => {
  it("R-RR-5, R-FO-5, R-UA-3, R-EX-4: names every cause the resolution policy admits, and what it also checks for each", async () => {
    const lines = await help();
    const resolvable = ALL_CAUSES.filter((cause) => {
      const decision = decideResolve(snapshot(cause, { retainedSource: true }));
      return !(decision.kind === "reject" && NOT_HERE.has(decision.code));
    });
    // Today: the legacy repair hold, the file-recovery obligation, the archive-limit and the copyback-failed holds.
    expect(resolvable.length).toBeGreaterThanOrEqual(4);
    for (const cause of resolvable) {
      const line = lineOf(lines, cause);
      expect(line, `${cause} is resolvable but missing from the help`).not.toBe("");
      // A cause whose repair also needs the lease's retained-source record says so on its line.
      const withoutRecord = decideResolve(snapshot(cause, { retainedSource: false }));
      const needsRecord = withoutRecord.kind === "reject" && withoutRecord.code === "retained_source_missing";
      expect(line.includes("retained-source record"), `${cause}: "${line}"`).toBe(needsRecord);
    }
  });

  it("R-ATT-3, R-EX-3: names each hold the command refuses and the command that settles it instead", async () => {
    const lines = await help();
    for (const cause of ALL_CAUSES) {
      const decision = decideResolve(snapshot(cause, { retainedSource: true }));
      if (decision.kind !== "reject" || !(decision.code in ELSEWHERE)) continue;
      const line = lineOf(lines, cause);
      expect(line, `${cause} is refused but missing from the help`).toContain(ELSEWHERE[decision.code]);
      expect(line).toContain(decision.code);
    }
  });

  it("R-RR-5, R-FO-5: names, for each outcome, the evidence flags the command refuses it without", async () => {
    const lines = await help();
    // The line that starts with the outcome's name as a word of its own (not the --outcome option's wrapped text).
    const outcomeLine = (outcome: string) => lines.find((line) => new RegExp(`^\\s+${outcome}\\s`).test(line)) ?? "";
    for (const outcome of ["restored", "false_positive", "cancelled"]) {
      const run = await runCli(["--json", "recovery", "resolve", "--action", A, "--outcome", outcome, "--source-status", "blocked", "--run", R, "--run-status", "failed"]);
      expect(run.code).toBe(EXIT.usage);
      const issues = (parseJson(run) as { error: { details: { issues: { flag: string }[] } } }).error.details.issues;
      const flags = issues.flatMap((issue) => issue.flag.match(/--[a-z-]+/g) ?? []);
      expect(flags.length, outcome).toBeGreaterThan(0);
      for (const flag of flags) expect(outcomeLine(outcome), `${outcome} needs ${flag}`).toContain(flag);
    }
  });
});
