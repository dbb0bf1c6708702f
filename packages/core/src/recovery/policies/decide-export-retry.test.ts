import { describe, expect, it } from "vitest";
import { EXPORT_RETRY_EXHAUSTED_CAUSE } from "../../records/causes";
import { decideExportRetry, EXPORT_RETRY_REJECT_STATUS, RETRYABLE_EXPORT_FAILURE_CODE, type ExportRetrySnapshot } from "./decide-export-retry";

const RUN = "11111111-1111-4111-8111-111111111111";
const ACTION = "22222222-2222-4222-8222-222222222222";
const LEASE = "33333333-3333-4333-8333-333333333333";
const RESULT = "44444444-4444-4444-8444-444444444444";

type Overrides = { [K in keyof ExportRetrySnapshot]?: ExportRetrySnapshot[K] extends object | null ? Partial<NonNullable<ExportRetrySnapshot[K]>> | null : ExportRetrySnapshot[K] };

function snapshot(o: Overrides = {}): ExportRetrySnapshot {
  const base: ExportRetrySnapshot = {
    stage: "admit",
    request: { runId: RUN, actionId: ACTION },
    action: {
      cause: EXPORT_RETRY_EXHAUSTED_CAUSE,
      status: "active",
      runId: RUN,
      leaseId: LEASE,
      evidence: { resultId: RESULT, leaseId: LEASE, providerLeaseId: `local-${LEASE}`, pluginId: "builtin.local" },
      retry: null,
    },
    lockAcquired: true,
    binding: {
      run: { id: RUN, companyId: "c", issueId: "i", agentId: "a", status: "failed", runtimeMode: "native" },
      issue: { id: "i", companyId: "c", status: "blocked", assigneeAgentId: "a", executionRunId: RUN, checkoutRunId: null },
      coordinator: { phase: "terminal_failure", resultId: RESULT },
      acceptedResultId: RESULT,
      otherActiveRunIds: [],
    },
    failureCode: RETRYABLE_EXPORT_FAILURE_CODE,
    descriptorLeaseId: LEASE,
    lease: {
      id: LEASE,
      companyId: "c",
      runId: RUN,
      pluginId: "builtin.local",
      providerLeaseId: `local-${LEASE}`,
      status: "released",
      policy: "ephemeral",
      receipt: "confirmed",
      sentinel: "valid",
      identityRecorded: true,
      retryIntentHeld: false,
    },
    competingLeaseIds: [],
    newerRunIds: [],
    plugin: { kind: "found", stop: true, resume: true, inspect: true, sentinel: true },
    sandbox: { kind: "inspected", state: "stopped", identityMatches: true },
  };
  const out = { ...base } as Record<string, unknown>;
  for (const [key, value] of Object.entries(o)) {
    const current = (base as unknown as Record<string, unknown>)[key];
    out[key] = value !== null && typeof value === "object" && !Array.isArray(value) && current !== null && typeof current === "object" && !Array.isArray(current) ? { ...current, ...value } : value;
  }
  return out as unknown as ExportRetrySnapshot;
}

const codeOf = (s: ExportRetrySnapshot) => {
  const d = decideExportRetry(s);
  return d.kind === "reject" ? d.code : d.kind;
};

describe("decideExportRetry", () => {
  it("R-EX-3 admits the exhausted run's exact result, lease and stopped sandbox", () => {
    expect(decideExportRetry(snapshot())).toEqual({ kind: "admit", resultId: RESULT });
  });

  it("R-EX-3 refuses another cause, another run, a closed action (422 for the wrong target, 409 for state)", () => {
    const wrongCause = decideExportRetry(snapshot({ action: { cause: "native_workspace_finalization_owner_unverified" } }));
    expect(wrongCause).toMatchObject({ kind: "reject", code: "action_not_export_retry", status: 422 });
    expect(decideExportRetry(snapshot({ action: { runId: "other" } }))).toMatchObject({ code: "run_mismatch", status: 422 });
    expect(decideExportRetry(snapshot({ action: { status: "resolved" } }))).toMatchObject({ code: "action_not_open", status: 409 });
  });

  it("R-EX-3 shares finalization ownership: a held advisory lock refuses", () => {
    expect(codeOf(snapshot({ lockAcquired: false }))).toBe("copyback_lock_active");
  });

  it("R-EX-3 only the exhausted failure code reopens a run", () => {
    expect(codeOf(snapshot({ failureCode: "workspace_merge_conflict" }))).toBe("not_retry_exhausted");
    expect(codeOf(snapshot({ binding: { coordinator: { phase: "committed", resultId: RESULT } } }))).toBe("not_retry_exhausted");
    expect(codeOf(snapshot({ binding: { run: { id: RUN, companyId: "c", issueId: "i", agentId: "a", status: "succeeded", runtimeMode: "native" } } }))).toBe("not_retry_exhausted");
  });

  it("R-EX-3 same task owner and execution: a reassigned, closed or rebound task refuses", () => {
    const issue = snapshot().binding.issue!;
    expect(codeOf(snapshot({ binding: { issue: { ...issue, assigneeAgentId: "b" } } }))).toBe("task_reassigned");
    expect(codeOf(snapshot({ binding: { issue: { ...issue, status: "done" } } }))).toBe("task_closed");
    expect(codeOf(snapshot({ binding: { issue: { ...issue, executionRunId: "newer" } } }))).toBe("newer_execution");
    expect(codeOf(snapshot({ binding: { otherActiveRunIds: ["queued"] } }))).toBe("newer_run");
    expect(codeOf(snapshot({ newerRunIds: ["later"] }))).toBe("newer_execution_exists");
  });

  it("R-EX-3 same accepted result: a changed coordinator result or hold evidence refuses", () => {
    expect(codeOf(snapshot({ binding: { acceptedResultId: "other" } }))).toBe("result_unbound");
    expect(codeOf(snapshot({ action: { evidence: { resultId: "other", leaseId: LEASE, providerLeaseId: `local-${LEASE}`, pluginId: "builtin.local" } } }))).toBe("result_changed");
    expect(codeOf(snapshot({ action: { evidence: null } }))).toBe("result_changed");
  });

  it("R-EX-3 same lease and descriptor: a changed lease, allocation, plugin or descriptor refuses", () => {
    expect(codeOf(snapshot({ lease: null }))).toBe("lease_missing");
    expect(codeOf(snapshot({ lease: { id: "other" } }))).toBe("lease_changed");
    expect(codeOf(snapshot({ lease: { providerLeaseId: "replacement" } }))).toBe("lease_changed");
    expect(codeOf(snapshot({ lease: { pluginId: "another.local" } }))).toBe("lease_changed");
    expect(codeOf(snapshot({ lease: { runId: "other" } }))).toBe("lease_changed");
    expect(codeOf(snapshot({ lease: { identityRecorded: false } }))).toBe("lease_changed");
    expect(codeOf(snapshot({ descriptorLeaseId: "other" }))).toBe("descriptor_changed");
    expect(codeOf(snapshot({ competingLeaseIds: ["x"] }))).toBe("competing_lease");
  });

  it("R-EX-5 an unconfirmed stop or a stale receipt never admits", () => {
    expect(codeOf(snapshot({ lease: { status: "pending_cleanup" } }))).toBe("stop_unconfirmed");
    for (const receipt of ["missing", "invalid", "mismatch"] as const) expect(codeOf(snapshot({ lease: { receipt } }))).toBe("stop_unconfirmed");
  });

  it("R-DT-2 a legacy allocation without the sentinel stays blocked; a foreign sentinel too", () => {
    expect(decideExportRetry(snapshot({ lease: { sentinel: "missing" } }))).toMatchObject({ code: "sentinel_missing", status: 409 });
    expect(codeOf(snapshot({ lease: { sentinel: "mismatch" } }))).toBe("sentinel_invalid");
    expect(codeOf(snapshot({ lease: { sentinel: "invalid" } }))).toBe("sentinel_invalid");
  });

  it("R-DT-2 a reusable allocation is proven by its workspace identity, not a sentinel", () => {
    expect(codeOf(snapshot({ lease: { policy: "reuse_by_environment", sentinel: "missing" } }))).toBe("admit");
    expect(codeOf(snapshot({ lease: { policy: "reuse_by_environment", sentinel: "missing" }, plugin: { kind: "found", stop: true, resume: true, inspect: true, sentinel: false } }))).toBe("admit");
    expect(codeOf(snapshot({ lease: { policy: "reuse_by_environment", identityRecorded: false } }))).toBe("lease_changed");
  });

  it("R-EX-6 the recorded plugin must be there and able to stop, resume, inspect and read the sentinel", () => {
    expect(codeOf(snapshot({ plugin: { kind: "unavailable", message: "gone" } }))).toBe("provider_plugin_unavailable");
    for (const cap of ["stop", "resume", "inspect", "sentinel"] as const) {
      expect(codeOf(snapshot({ plugin: { kind: "found", stop: true, resume: true, inspect: true, sentinel: true, [cap]: false } }))).toBe("provider_capability_missing");
    }
  });

  it("R-EX-3 an unavailable, replaced or running sandbox answers 409", () => {
    expect(decideExportRetry(snapshot({ sandbox: { kind: "inspected", state: "missing", identityMatches: false } }))).toMatchObject({ code: "sandbox_unavailable", status: 409 });
    expect(codeOf(snapshot({ sandbox: { kind: "inspected", state: "stopped", identityMatches: false } }))).toBe("sandbox_unavailable");
    expect(codeOf(snapshot({ sandbox: { kind: "inspected", state: "running", identityMatches: true } }))).toBe("sandbox_unavailable");
    expect(codeOf(snapshot({ sandbox: { kind: "probe_failed", message: "timeout" } }))).toBe("sandbox_unavailable");
    expect(codeOf(snapshot({ sandbox: { kind: "not_probed" } }))).toBe("sandbox_unavailable");
  });

  it("R-EX-3 a duplicate request is idempotent: in flight or re-admitted, the same answer and nothing to write", () => {
    expect(decideExportRetry(snapshot({ action: { retry: { requestId: "r1", state: "resuming" } }, lease: { status: "pending_cleanup", retryIntentHeld: true }, lockAcquired: false }))).toEqual({ kind: "already_requested", requestId: "r1", state: "resuming" });
    // R-EX-5: a retry that died mid-resume is over once the sweep stopped the sandbox again: a new one is admitted.
    expect(codeOf(snapshot({ action: { retry: { requestId: "r1", state: "resuming" } } }))).toBe("admit");
    const readmitted = snapshot({ action: { retry: { requestId: "r1", state: "readmitted" } }, binding: { coordinator: { phase: "workspace_finalizing", resultId: RESULT } } });
    expect(decideExportRetry(readmitted)).toEqual({ kind: "already_requested", requestId: "r1", state: "readmitted" });
    // Exhausted again after a re-admission: a new request is admitted; a failed one may be asked again.
    expect(codeOf(snapshot({ action: { retry: { requestId: "r1", state: "readmitted" } } }))).toBe("admit");
    expect(codeOf(snapshot({ action: { retry: { requestId: "r1", state: "failed" } } }))).toBe("admit");
  });

  it("R-EX-5 the second look after the resume needs this retry's intent and the running, recorded sandbox", () => {
    const readmit = (o: Overrides = {}) =>
      snapshot({ stage: "readmit", action: { retry: { requestId: "r1", state: "resuming" } }, lease: { status: "pending_cleanup", receipt: "missing", retryIntentHeld: true }, sandbox: { kind: "inspected", state: "running", identityMatches: true }, ...o });
    expect(codeOf(readmit())).toBe("admit");
    expect(codeOf(readmit({ lease: { status: "pending_cleanup", receipt: "missing", retryIntentHeld: false } }))).toBe("retry_intent_changed");
    expect(codeOf(readmit({ action: { retry: { requestId: "r1", state: "failed" } } }))).toBe("retry_intent_changed");
    expect(codeOf(readmit({ sandbox: { kind: "inspected", state: "running", identityMatches: false } }))).toBe("sandbox_unavailable");
    expect(codeOf(readmit({ binding: { otherActiveRunIds: ["queued"] } }))).toBe("newer_run");
  });

  it("R-EX-3 never resumes a sandbox an operator discarded (its destroy may still be finishing), at either look", () => {
    expect(decideExportRetry(snapshot({ lease: { discarding: true } }))).toMatchObject({ kind: "reject", code: "sandbox_being_discarded", status: 409 });
    const readmit = snapshot({ stage: "readmit", action: { retry: { requestId: "r1", state: "resuming" } }, lease: { status: "pending_cleanup", receipt: "missing", retryIntentHeld: true, discarding: true }, sandbox: { kind: "inspected", state: "running", identityMatches: true } });
    expect(codeOf(readmit)).toBe("sandbox_being_discarded");
    expect(codeOf(snapshot({ lease: { discarding: false } }))).toBe("admit");
  });

  it("every reject code maps to 409 or 422", () => {
    for (const status of Object.values(EXPORT_RETRY_REJECT_STATUS)) expect([409, 422]).toContain(status);
  });
});
