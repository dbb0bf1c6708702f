// R-FO-1, R-FO-2, R-FO-4, R-FO-6: what a run that fails before its result leaves behind, table-driven.
import { describe, expect, it } from "vitest";
import { newPreparationClaim, type PreparationClaim } from "../../records/preparation-claim";
import { decideFailBeforeResult, decideOrphanPreparation, decidePreparationClaim, type FailBeforeResultSnapshot } from "./decide-file-recovery";

const NOW = new Date("2026-12-01T12:00:00Z");
const HOLDER = { pid: 4242, startTime: "123456", bootId: "boot-a", host: "worker-a" };
const claim = (overrides: Partial<PreparationClaim> = {}): PreparationClaim => ({ ...newPreparationClaim(HOLDER, new Date(NOW.getTime() - 60_000)), ...overrides });

const base: FailBeforeResultSnapshot = {
  runStatus: "running",
  native: true,
  acceptedResult: false,
  exportFinalized: false,
  lease: { id: "lease-1", status: "active", providerLeaseId: "sbx-1" },
  claim: null,
};

describe("decideFailBeforeResult", () => {
  it("R-FO-1 a running native run without a result and with a bound allocation retains its files", () => {
    expect(decideFailBeforeResult(base)).toEqual({ kind: "retain_files", leaseId: "lease-1" });
  });

  it("R-FO-2 a prepared workspace is no export receipt: only the success barrier counts, so a prepared run still retains its files", () => {
    // The snapshot has no notion of a prepared workspace at all: only exportFinalized (the barrier) stops retention.
    expect(decideFailBeforeResult({ ...base, exportFinalized: false })).toMatchObject({ kind: "retain_files" });
  });

  it("R-FO-6 an accepted result keeps its own path and a finalized export creates no obligation", () => {
    expect(decideFailBeforeResult({ ...base, acceptedResult: true })).toEqual({ kind: "fail_only", reason: "accepted_result" });
    expect(decideFailBeforeResult({ ...base, exportFinalized: true })).toEqual({ kind: "fail_only", reason: "export_finalized" });
  });

  it("a run without an allocation, a destroyed lease or a legacy run fails alone", () => {
    expect(decideFailBeforeResult({ ...base, lease: null })).toEqual({ kind: "fail_only", reason: "no_allocation" });
    expect(decideFailBeforeResult({ ...base, lease: { id: "l", status: "active", providerLeaseId: null } })).toEqual({ kind: "fail_only", reason: "no_allocation" });
    // An acquisition whose reply was lost: never handed to an agent; its destroy intent must settle.
    expect(decideFailBeforeResult({ ...base, lease: { id: "l", status: "pending_cleanup", providerLeaseId: null } })).toEqual({ kind: "fail_only", reason: "no_allocation" });
    expect(decideFailBeforeResult({ ...base, lease: { id: "l", status: "destroyed", providerLeaseId: "sbx" } })).toEqual({ kind: "fail_only", reason: "no_allocation" });
    expect(decideFailBeforeResult({ ...base, native: false })).toEqual({ kind: "fail_only", reason: "legacy_run" });
  });

  it("an already pinned or stopped-and-retained lease still gets its obligation", () => {
    expect(decideFailBeforeResult({ ...base, lease: { id: "l", status: "pending_cleanup", providerLeaseId: "sbx" } })).toEqual({ kind: "retain_files", leaseId: "l" });
    expect(decideFailBeforeResult({ ...base, lease: { id: "l", status: "released", providerLeaseId: "sbx" } })).toEqual({ kind: "retain_files", leaseId: "l" });
  });

  it("R-FO-1 a run refused by its executor before its agent was started opens no obligation (no agent, no edits), whatever its lease", () => {
    expect(decideFailBeforeResult({ ...base, agentNeverStarted: true })).toEqual({ kind: "fail_only", reason: "agent_not_started" });
    expect(decideFailBeforeResult({ ...base, agentNeverStarted: true, lease: { id: "l", status: "released", providerLeaseId: "sbx" } })).toEqual({ kind: "fail_only", reason: "agent_not_started" });
    // Without that word (a provider failure, an agent that exited) the sandbox is retained as before.
    expect(decideFailBeforeResult({ ...base, agentNeverStarted: false })).toEqual({ kind: "retain_files", leaseId: "lease-1" });
    // The other rules come first: a settled run writes nothing, a refused claim cleans nothing up.
    expect(decideFailBeforeResult({ ...base, agentNeverStarted: true, runStatus: "failed" })).toEqual({ kind: "already_settled", status: "failed" });
    expect(decideFailBeforeResult({ ...base, agentNeverStarted: true, claim: { kind: "refused", reason: "claim_stale" } })).toEqual({ kind: "refused", reason: "claim_stale" });
  });

  it("a settled run writes nothing", () => {
    for (const status of ["failed", "succeeded", "cancelled", "timed_out"]) expect(decideFailBeforeResult({ ...base, runStatus: status })).toEqual({ kind: "already_settled", status });
  });

  it("R-FO-4 a refused claim writes nothing, before any other consideration", () => {
    for (const reason of ["claim_other_owner", "claim_stale", "claim_missing", "preparation_settled"] as const) {
      expect(decideFailBeforeResult({ ...base, claim: { kind: "refused", reason } })).toEqual({ kind: "refused", reason });
      expect(decideFailBeforeResult({ ...base, acceptedResult: true, claim: { kind: "refused", reason } })).toEqual({ kind: "refused", reason });
    }
    expect(decideFailBeforeResult({ ...base, claim: { kind: "live" } })).toMatchObject({ kind: "retain_files" });
  });
});

describe("decidePreparationClaim", () => {
  it("R-FO-4 only the exact live claim settles: same token, not expired, on a running operation", () => {
    const c = claim();
    expect(decidePreparationClaim({ operation: { status: "running", claim: c }, token: c.token, now: NOW })).toEqual({ kind: "live" });
  });

  it("R-FO-4 another owner's claim, a stale claim, a missing claim or a settled operation is refused", () => {
    const c = claim();
    expect(decidePreparationClaim({ operation: { status: "running", claim: c }, token: "00000000-0000-4000-8000-000000000000", now: NOW })).toEqual({ kind: "refused", reason: "claim_other_owner" });
    const stale = claim({ expiresAt: NOW.toISOString() });
    expect(decidePreparationClaim({ operation: { status: "running", claim: stale }, token: stale.token, now: NOW })).toEqual({ kind: "refused", reason: "claim_stale" });
    expect(decidePreparationClaim({ operation: { status: "running", claim: null }, token: c.token, now: NOW })).toEqual({ kind: "refused", reason: "claim_missing" });
    expect(decidePreparationClaim({ operation: null, token: c.token, now: NOW })).toEqual({ kind: "refused", reason: "claim_missing" });
    expect(decidePreparationClaim({ operation: { status: "failed", claim: c }, token: c.token, now: NOW })).toEqual({ kind: "refused", reason: "preparation_settled" });
    expect(decidePreparationClaim({ operation: { status: "succeeded", claim: c }, token: c.token, now: NOW })).toEqual({ kind: "refused", reason: "preparation_settled" });
  });
});

describe("decideOrphanPreparation", () => {
  it("R-FO-4 the orphan sweep takes over the dead controller's claim, an expired claim or a missing one", () => {
    expect(decideOrphanPreparation({ claim: claim(), deadController: HOLDER, now: NOW })).toEqual({ kind: "take_over" });
    expect(decideOrphanPreparation({ claim: claim({ holder: { ...HOLDER, pid: 1 }, expiresAt: NOW.toISOString() }), deadController: HOLDER, now: NOW })).toEqual({ kind: "take_over" });
    expect(decideOrphanPreparation({ claim: null, deadController: HOLDER, now: NOW })).toEqual({ kind: "take_over" });
  });

  it("R-FO-4 a live claim of another holder stops the recovery (same PID with another start time is another process)", () => {
    expect(decideOrphanPreparation({ claim: claim({ holder: { ...HOLDER, startTime: "999" } }), deadController: HOLDER, now: NOW })).toEqual({ kind: "refused", reason: "claim_other_owner" });
    expect(decideOrphanPreparation({ claim: claim({ holder: { ...HOLDER, host: "worker-b" } }), deadController: HOLDER, now: NOW })).toEqual({ kind: "refused", reason: "claim_other_owner" });
  });
});
