// The checker against hand-made histories and final states: a clean one passes, and each
// violation kind is reported by a state that contains exactly that violation.
import { describe, expect, it } from "vitest";
import type { HistoryEvent } from "../history";
import { FILE_RECOVERY, check, formatCounts, OWNER_UNVERIFIED, VIOLATION_KINDS, type ViolationKind } from "./check";
import type { FinalState, HostEntry } from "./final-state";
import { applyLocalRun, contentHash, type DirModel } from "./model";

const WS = "/host/ws0";
const DIR = "t/TORT-1";
const R1 = "11111111-1111-4111-8111-111111111111";
const R2 = "22222222-2222-4222-8222-222222222222";
const R3 = "33333333-3333-4333-8333-333333333333";
const ISSUE = "99999999-9999-4999-8999-999999999999";

let clock = 1_000n;
const ev = (name: string, fields: Record<string, unknown> = {}): HistoryEvent => ({ t: String((clock += 10n)), ev: name, ...fields });

/** The host files the replay of `runs` (in order) leaves in DIR, plus the baseline. */
function hostAfter(runs: string[]): Record<string, HostEntry> {
  const model: DirModel = new Map();
  for (const r of runs) applyLocalRun(model, DIR, r);
  const host: Record<string, HostEntry> = { "base/README.md": { kind: "file", sha256: "b1", token: null }, t: { kind: "directory" }, [DIR]: { kind: "directory" } };
  for (const [name, e] of model) host[`${DIR}/${name}`] = e.kind === "file" ? { kind: "file", sha256: e.sha256, token: e.token } : { kind: "symlink", target: e.target };
  return host;
}

function cleanState(): FinalState {
  return {
    slots: [{ slot: "TORT-1", issueId: ISSUE, dir: DIR, workspace: WS, kind: "local" }],
    runs: [
      { id: R1, issueId: ISSUE, status: "succeeded", errorCode: null, provider: "local" },
      { id: R2, issueId: ISSUE, status: "succeeded", errorCode: null, provider: "local" },
    ],
    acceptedResults: [{ runId: R1 }, { runId: R2 }],
    coordinators: [
      { runId: R1, phase: "committed", committedAt: "2026-01-01T00:00:01.000Z", failureCode: null },
      { runId: R2, phase: "committed", committedAt: "2026-01-01T00:00:02.000Z", failureCode: null },
    ],
    finalizeOps: [
      { runId: R1, status: "succeeded", stage: "primary", omitted: false },
      { runId: R2, status: "succeeded", stage: "primary", omitted: false },
    ],
    actions: [],
    leases: [
      { id: "l1", runId: R1, status: "destroyed", provider: "local", providerLeaseId: "local-l1", sandboxExists: false },
      { id: "l2", runId: R2, status: "destroyed", provider: "local", providerLeaseId: "local-l2", sandboxExists: false },
    ],
    host: { [WS]: hostAfter([R1, R2]) },
    baseline: { [WS]: { "base/README.md": { kind: "file", sha256: "b1", token: null } } },
  };
}

const merge = (pid: number, runId: string, from: number, to: number | null): HistoryEvent[] => [
  { t: String(from), ev: "merge.enter", pid, target: WS, runId },
  ...(to === null ? [] : [{ t: String(to), ev: "merge.exit", pid, target: WS, runId, ok: true }]),
];

const kinds = (state: FinalState, history: HistoryEvent[] = [], strict = false): ViolationKind[] => [...new Set(check(history, state, { strictIssue11: strict }).violations.map((v) => v.kind))].sort();

describe("the torture checker", () => {
  it("passes a clean history and final state, and prints the counts table", () => {
    const history = [...merge(10, R1, 100, 200), ...merge(11, R2, 300, 400), ev("fault", { kind: "kill_worker" })];
    const verdict = check(history, cleanState());
    expect(verdict.violations).toEqual([]);
    expect(verdict.counts).toMatchObject({ runs: 2, commits: 2, faults: 1, mergeIntervals: 2 });
    const table = formatCounts(verdict, { seed: "1" });
    for (const kind of VIOLATION_KINDS) expect(table).toContain(kind);
  });

  it("concurrent_writers: two processes inside one target's lock at once", () => {
    expect(kinds(cleanState(), [...merge(10, R1, 100, 300), ...merge(11, R2, 200, 400)])).toContain("concurrent_writers");
  });

  it("a killed worker's open interval ends at its observed exit (no overlap after it)", () => {
    const history = [...merge(10, R1, 100, null), { t: "150", ev: "worker.exit", pid: 10 }, ...merge(11, R2, 200, 300)];
    expect(kinds(cleanState(), history)).toEqual([]);
    const stopped = [...merge(10, R1, 100, null), ...merge(11, R2, 200, 300)];
    expect(kinds(cleanState(), stopped)).toContain("concurrent_writers");
  });

  it("a SIGKILLed worker's open interval ends when the kill is sent, not when the harness notices the exit", () => {
    // Killed at 150; the exit is observed only at 400 (a loaded harness); another writer takes
    // the lock the kernel freed at 200.
    const history = [...merge(10, R1, 100, null), { t: "150", ev: "fault", kind: "kill_worker", pid: 10 }, ...merge(11, R2, 200, 300), { t: "400", ev: "worker.exit", pid: 10 }];
    expect(kinds(cleanState(), history)).toEqual([]);
    // Entering before the kill is still a violation.
    const early = [...merge(10, R1, 100, null), ...merge(11, R2, 120, 300), { t: "150", ev: "fault", kind: "kill_worker", pid: 10 }];
    expect(kinds(cleanState(), early)).toContain("concurrent_writers");
  });

  it("concurrent_owners: two processes copying one run at once", () => {
    const history: HistoryEvent[] = [
      { t: "100", ev: "merge.enter", pid: 10, target: "/host/a", runId: R1 },
      { t: "150", ev: "merge.enter", pid: 11, target: "/host/b", runId: R1 },
      { t: "200", ev: "merge.exit", pid: 10, target: "/host/a", runId: R1 },
      { t: "250", ev: "merge.exit", pid: 11, target: "/host/b", runId: R1 },
    ];
    expect(kinds(cleanState(), history)).toEqual(["concurrent_owners"]);
  });

  it("double_copy and commit_without_barrier", () => {
    const s = cleanState();
    s.finalizeOps.push({ runId: R1, status: "succeeded", stage: "primary", omitted: false });
    s.finalizeOps = s.finalizeOps.filter((o, i) => !(o.runId === R2 && i === 1));
    expect(kinds(s)).toEqual(["commit_without_barrier", "double_copy"]);
  });

  it("accepted_result_dropped: an accepted result ended failed without a hold", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "failed", errorCode: "archive_extraction_failed" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "terminal_failure" };
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1]);
    expect(kinds(s)).toEqual(["accepted_result_dropped"]);
  });

  it("accepted_not_settled, run_left_running: still finalizing, no hold", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "running" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "retryable_failure", failureCode: "provider_export_timeout" };
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1]);
    expect(kinds(s)).toEqual(["accepted_not_settled", "run_left_running"]);
  });

  it("a held run is fine with one open hold of the right cause; duplicate_holds and hold_wrong_cause otherwise", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "running" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "workspace_finalizing" };
    s.finalizeOps.pop();
    s.leases[1] = { ...s.leases[1]!, status: "active", sandboxExists: true };
    s.host[WS] = hostAfter([R1]);
    s.actions = [{ id: "a1", runId: R2, cause: OWNER_UNVERIFIED, status: "active" }];
    expect(kinds(s)).toEqual([]);
    s.actions.push({ id: "a2", runId: R2, cause: "something_else", status: "active" });
    expect(kinds(s)).toEqual(["duplicate_holds", "hold_wrong_cause"]);
  });

  it("held_sandbox_destroyed and held_sandbox_reused", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "running" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "workspace_finalizing" };
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1]);
    s.actions = [{ id: "a1", runId: R2, cause: OWNER_UNVERIFIED, status: "active" }];
    s.leases[1] = { ...s.leases[1]!, status: "destroyed", sandboxExists: false };
    s.leases.push({ id: "l3", runId: R3, status: "released", provider: "local", providerLeaseId: "local-l2", sandboxExists: false });
    expect(kinds(s)).toEqual(["held_sandbox_destroyed", "held_sandbox_reused"]);
  });

  it("a held run's lease released as stopped-and-retained (a confirmed stop receipt) keeps its sandbox: no violation", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "running" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "workspace_finalizing" };
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1]);
    s.actions = [{ id: "a1", runId: R2, cause: OWNER_UNVERIFIED, status: "active" }];
    s.leases[1] = { ...s.leases[1]!, status: "released", sandboxExists: true, stoppedAndRetained: true };
    expect(kinds(s)).toEqual([]);
    s.leases[1] = { ...s.leases[1]!, stoppedAndRetained: false };
    expect(kinds(s)).toEqual(["held_sandbox_destroyed"]);
  });

  it("lost_file: a committed run's file is missing", () => {
    const s = cleanState();
    const host = s.host[WS]!;
    delete host[`${DIR}/anchor.txt`];
    expect(kinds(s)).toEqual(["lost_file"]);
  });

  it("torn_file: a file whose bytes match no committed run's", () => {
    const s = cleanState();
    s.host[WS]![`${DIR}/anchor.txt`] = { kind: "file", sha256: "deadbeef", token: R1 };
    expect(kinds(s)).toEqual(["torn_file"]);
  });

  it("uncommitted_write: bytes of a run that never committed", () => {
    const s = cleanState();
    s.host[WS]![`${DIR}/anchor.txt`] = { kind: "file", sha256: contentHash(R3, `${DIR}/anchor.txt`, 0), token: R3 };
    s.host[WS]![`${DIR}/extra.txt`] = { kind: "file", sha256: "x", token: R3 };
    expect(kinds(s)).toEqual(["uncommitted_write"]);
  });

  it("committed_overwritten: an earlier committed run's bytes where a later one's belong", () => {
    const s = cleanState();
    // R1 then R2 is the truth; a host that shows R2's replay with R1's anchor over... use the reverse order's anchor.
    s.coordinators[0] = { ...s.coordinators[0]!, committedAt: "2026-01-01T00:00:03.000Z" };
    expect(kinds(s).length).toBeGreaterThan(0);
    const t = cleanState();
    t.host[WS]![`${DIR}/anchor.txt`] = { kind: "symlink", target: "anchor.txt" };
    expect(kinds(t)).toEqual(["committed_overwritten"]);
  });

  it("unexpected_file, baseline_changed and unsafe_link_on_host", () => {
    const s = cleanState();
    s.host[WS]!["base/README.md"] = { kind: "file", sha256: "changed", token: null };
    s.host[WS]!["stray.txt"] = { kind: "file", sha256: "s", token: null };
    s.host[WS]![`${DIR}/u-1.lnk`] = { kind: "symlink", target: "/etc/passwd" };
    expect(kinds(s)).toEqual(["baseline_changed", "unexpected_file", "unsafe_link_on_host"]);
  });

  it("run_left_queued, coordinator_unsettled and lease_active_without_run", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "queued", errorCode: null, provider: "local" });
    s.runs.push({ id: "44444444-4444-4444-8444-444444444444", issueId: ISSUE, status: "failed", errorCode: "agent_exit_nonzero", provider: "local" });
    s.coordinators.push({ runId: "44444444-4444-4444-8444-444444444444", phase: "workspace_finalizing", committedAt: null, failureCode: null });
    s.leases.push({ id: "l4", runId: "44444444-4444-4444-8444-444444444444", status: "active", provider: "local", providerLeaseId: "local-l4", sandboxExists: true });
    expect(kinds(s)).toEqual(["coordinator_unsettled", "died_before_result_unrecovered", "lease_active_without_run", "run_left_queued"]);
  });

  it("R-FO-1 (issue 11, strict by default): a process_lost run with an active lease and no obligation is reported; the flag relaxes nothing", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "process_lost", provider: "local" });
    s.leases.push({ id: "l3", runId: R3, status: "active", provider: "local", providerLeaseId: "local-l3", sandboxExists: true });
    expect(kinds(s)).toEqual(["died_before_result_unrecovered", "lease_active_without_run"]);
    expect(kinds(s, [], true)).toEqual(["died_before_result_unrecovered", "lease_active_without_run"]);
    expect(check([], s).counts.relaxed).toEqual({});
  });

  it("R-FO-1 a run that failed before its result is clean only with one obligation and its lease pinned, its sandbox kept", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "agent_exit_nonzero", provider: "local" });
    s.actions.push({ id: "f3", runId: R3, cause: FILE_RECOVERY, status: "active" });
    // Pinned (stop-only intent pending) or stopped and retained: clean.
    s.leases.push({ id: "l3", runId: R3, status: "pending_cleanup", provider: "local", providerLeaseId: "local-l3", sandboxExists: true });
    expect(check([], s).violations).toEqual([]);
    s.leases[2] = { ...s.leases[2]!, status: "released", stoppedAndRetained: true };
    expect(check([], s).violations).toEqual([]);
    // Released without the receipt, destroyed, or the sandbox gone: the files are not kept.
    s.leases[2] = { ...s.leases[2]!, status: "released", stoppedAndRetained: false };
    expect(kinds(s)).toContain("died_before_result_unrecovered");
    s.leases[2] = { ...s.leases[2]!, status: "destroyed", sandboxExists: false };
    expect(kinds(s)).toContain("died_before_result_unrecovered");
    // Two obligations for one run.
    s.leases[2] = { ...s.leases[2]!, status: "pending_cleanup", sandboxExists: true };
    s.actions.push({ id: "f4", runId: R3, cause: FILE_RECOVERY, status: "active" });
    expect(kinds(s)).toEqual(["duplicate_holds"]);
  });

  it("R-FO-6 a failed run with an accepted result, or one that never had an allocation, needs no file obligation", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "native_workspace_sync_out_retry_exhausted", provider: "local" });
    s.acceptedResults.push({ runId: R3 });
    s.actions.push({ id: "x3", runId: R3, cause: "native_workspace_sync_out_retry_exhausted", status: "active" });
    s.leases.push({ id: "l3", runId: R3, status: "pending_cleanup", provider: "local", providerLeaseId: "local-l3", sandboxExists: true });
    s.runs.push({ id: "55555555-5555-4555-8555-555555555555", issueId: ISSUE, status: "failed", errorCode: "provider_acquire_failed", provider: "local" });
    // Its acquisition allocated a sandbox it never handed to the run; the sweep destroyed it.
    s.leases.push({ id: "l5", runId: "55555555-5555-4555-8555-555555555555", status: "destroyed", provider: "local", providerLeaseId: "local-l5", sandboxExists: false, handedToRun: false });
    expect(check([], s).violations).toEqual([]);
  });

  it("a fake run whose sandbox died with its worker is relaxed (fake sandboxes live in memory)", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "running", provider: "fake" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "retryable_failure", failureCode: "provider_sandbox_missing" };
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1]);
    const verdict = check([], s);
    expect(verdict.violations).toEqual([]);
    expect(verdict.counts.relaxed).toMatchObject({ fake_sandbox_lost: 1 });
  });

  it("the files a held accepted result published under the lock before its worker died are in flight, not an uncommitted writer", () => {
    const held = () => {
      const s = cleanState();
      s.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "native_workspace_sync_out_retry_exhausted", provider: "fake" });
      s.acceptedResults.push({ runId: R3 });
      s.coordinators.push({ runId: R3, phase: "terminal_failure", committedAt: null, failureCode: "native_workspace_sync_out_retry_exhausted" });
      s.actions.push({ id: "x3", runId: R3, cause: "native_workspace_sync_out_retry_exhausted", status: "active" });
      s.host[WS]![`${DIR}/fake-${R3}.txt`] = { kind: "file", sha256: "partial", token: R3 };
      return s;
    };
    const verdict = check(merge(7, R3, 100, null), held());
    expect(verdict.violations).toEqual([]);
    expect(verdict.counts.relaxed).toMatchObject({ held_run_partial_write: 1 });
    // No locked write observed for it: the same bytes are an uncommitted writer.
    expect(kinds(held())).toEqual(["uncommitted_write"]);
    // Once its hold is gone they are too.
    const resolved = held();
    resolved.actions[0] = { ...resolved.actions[0]!, status: "resolved" };
    expect(kinds(resolved, merge(7, R3, 100, null))).toContain("uncommitted_write");
  });

  it("the files a fake run published under the lock before its worker (and so its sandbox) died are in flight while it retries", () => {
    // Seen in CI (seed 160314899): killed mid-merge, attested, the attested copyback found no sandbox.
    const lost = () => {
      const s = cleanState();
      s.runs.push({ id: R3, issueId: ISSUE, status: "running", errorCode: null, provider: "fake" });
      s.acceptedResults.push({ runId: R3 });
      s.coordinators.push({ runId: R3, phase: "retryable_failure", committedAt: null, failureCode: "provider_sandbox_missing" });
      s.host[WS]![`${DIR}/fake-${R3}.txt`] = { kind: "file", sha256: "partial", token: R3 };
      return s;
    };
    const verdict = check(merge(7, R3, 100, null), lost());
    expect(verdict.violations).toEqual([]);
    expect(verdict.counts.relaxed).toMatchObject({ fake_sandbox_lost: 1, held_run_partial_write: 1 });
    // Without an observed locked write the bytes are an uncommitted writer.
    expect(kinds(lost())).toEqual(["uncommitted_write"]);
    // A local run is never relaxed: its sandbox is on disk.
    const local = lost();
    local.runs[local.runs.length - 1] = { ...local.runs[local.runs.length - 1]!, provider: "local" };
    expect(kinds(local, merge(7, R3, 100, null))).toContain("uncommitted_write");
  });

  it("provenance: a commit that wrote a path its own agent did not write (another run's sandbox exported under its name)", () => {
    const s = cleanState();
    // What each run's replay changes in its own directory: clean.
    const changed = (runs: string[], run: string) => {
      const before = hostAfter(runs.slice(0, runs.indexOf(run)));
      const after = hostAfter(runs.slice(0, runs.indexOf(run) + 1));
      return Object.keys(after).filter((p) => p.startsWith(`${DIR}/`) && JSON.stringify(after[p]) !== JSON.stringify(before[p]));
    };
    s.finalizeOps = [
      { runId: R1, status: "succeeded", stage: "primary", omitted: false, written: ["t", DIR, ...changed([R1, R2], R1)] },
      { runId: R2, status: "succeeded", stage: "primary", omitted: false, written: changed([R1, R2], R2) },
    ];
    expect(kinds(s)).toEqual([]);
    // R2's copyback wrote another task's file (issue 20: the reused lease's other run).
    s.finalizeOps[1] = { ...s.finalizeOps[1]!, written: [...changed([R1, R2], R2), "t/TORT-2/f-33333333-0.txt"] };
    expect(kinds(s)).toEqual(["provenance"]);
    // Or a file in its own directory that its plan never wrote.
    s.finalizeOps[1] = { ...s.finalizeOps[1]!, written: [...changed([R1, R2], R2), `${DIR}/f-33333333-0.txt`] };
    expect(kinds(s)).toEqual(["provenance"]);
  });

  it("held_lease_taken: a lease handed to another run while its run's accepted result was not committed, or while it held a failed run's files", () => {
    const s = cleanState();
    s.leases[1] = { ...s.leases[1]!, id: "l1" };
    const at = (ms: number) => new Date(Date.parse("2026-01-01T00:00:00.000Z") + ms).toISOString();
    // R1 committed at 1 s, R2 reuses its lease at 1.5 s: fine.
    s.acquisitions = [
      { runId: R1, leaseId: "l1", at: at(0), reused: false },
      { runId: R2, leaseId: "l1", at: at(1_500), reused: true },
    ];
    expect(kinds(s)).toEqual([]);
    expect(check([], s).counts.reuses).toBe(1);
    // R2 reused it at 0.5 s, before R1's commit at 1 s (R1's coordinator was retrying its export).
    s.acquisitions[1] = { ...s.acquisitions[1]!, at: at(500) };
    expect(kinds(s)).toEqual(["held_lease_taken"]);
    // A failed run's held lease reused.
    const t = cleanState();
    t.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "agent_exit_nonzero", provider: "local" });
    t.actions.push({ id: "f3", runId: R3, cause: FILE_RECOVERY, status: "active" });
    t.leases.push({ id: "l3", runId: R2, status: "destroyed", provider: "local", providerLeaseId: "local-l3", sandboxExists: false });
    t.acquisitions = [
      { runId: R3, leaseId: "l3", at: at(0), reused: false },
      { runId: R2, leaseId: "l3", at: at(1_500), reused: true },
    ];
    expect(kinds(t)).toContain("held_lease_taken");
  });

  it("accepted_result_dropped: an accepted result held only by a cause that does not apply it (a file-recovery obligation after a Stop)", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "cancelled", errorCode: "run_stopped" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "terminal_failure", failureCode: "run_stopped" };
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1]);
    s.leases[1] = { ...s.leases[1]!, status: "released", sandboxExists: true, stoppedAndRetained: true, retainedListed: true };
    s.actions = [{ id: "f2", runId: R2, cause: FILE_RECOVERY, status: "active" }];
    expect(kinds(s)).toEqual(["accepted_result_dropped"]);
    // Held by a copyback-failed hold (issue 20): kept, not dropped.
    s.actions = [{ id: "c2", runId: R2, cause: "native_workspace_sync_out_failed", status: "active" }];
    expect(kinds(s)).toEqual([]);
  });

  it("retained_invisible: a sandbox on disk that the retained list does not show, or that no live lease names", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "succeeded", errorCode: null, provider: "local" });
    s.acceptedResults.push({ runId: R3 });
    s.coordinators.push({ runId: R3, phase: "committed", committedAt: "2026-01-01T00:00:03.000Z", failureCode: null });
    s.finalizeOps.push({ runId: R3, status: "succeeded", stage: "primary", omitted: false });
    s.host[WS] = hostAfter([R1, R2, R3]);
    // A warm reusable sandbox (released with a confirmed stop, its run committed): fine unlisted.
    s.leases.push({ id: "l3", runId: R3, status: "released", provider: "local", providerLeaseId: "local-l3", sandboxExists: true, stoppedAndRetained: true, leasePolicy: "reuse_by_environment", retainedListed: false });
    expect(kinds(s)).toEqual([]);
    // An ephemeral one stopped during a retry and never destroyed after the commit: invisible.
    s.leases[2] = { ...s.leases[2]!, leasePolicy: "ephemeral" };
    expect(kinds(s)).toEqual(["retained_invisible"]);
    // Listed: fine.
    s.leases[2] = { ...s.leases[2]!, retainedListed: true };
    expect(kinds(s)).toEqual([]);
    // A sandbox directory no live lease names.
    s.strayLocalSandboxes = ["local-l9"];
    expect(kinds(s)).toEqual(["retained_invisible"]);
  });

  it("retained_invisible: a committed run's destroy left to the cleanup sweep (its releaser killed) is no violation; a destroy intent on files nobody committed is", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "succeeded", errorCode: null, provider: "local" });
    s.acceptedResults.push({ runId: R3 });
    s.coordinators.push({ runId: R3, phase: "committed", committedAt: "2026-01-01T00:00:03.000Z", failureCode: null });
    s.finalizeOps.push({ runId: R3, status: "succeeded", stage: "primary", omitted: false });
    s.host[WS] = hostAfter([R1, R2, R3]);
    s.leases.push({ id: "l3", runId: R3, status: "pending_cleanup", provider: "local", providerLeaseId: "local-l3", sandboxExists: true, leasePolicy: "ephemeral", retainedListed: false, destroyPending: true });
    expect(kinds(s)).toEqual([]);
    // Without the recorded destroy intent it is a sandbox nobody will clean up or show.
    s.leases[2] = { ...s.leases[2]!, destroyPending: false };
    expect(kinds(s)).toEqual(["retained_invisible"]);
    // A destroy intent on a run that did not commit (its agent ran): invisible files, a violation.
    s.leases[2] = { ...s.leases[2]!, destroyPending: true };
    s.runs[2] = { ...s.runs[2]!, status: "failed", errorCode: "process_lost" };
    s.coordinators[2] = { ...s.coordinators[2]!, phase: "terminal_failure", committedAt: null, failureCode: "process_lost" };
    s.acceptedResults.pop();
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1, R2]);
    s.actions = [{ id: "a3", runId: R3, cause: FILE_RECOVERY, status: "active" }];
    expect(kinds(s)).toContain("retained_invisible");
  });

  it("an attempt that went back to the queue before its agent started (a database outage) held nothing: its destroyed lease is no held_sandbox_destroyed", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "running" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "workspace_finalizing" };
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1]);
    s.actions = [{ id: "a1", runId: R2, cause: OWNER_UNVERIFIED, status: "active" }];
    // The first attempt's lease (destroyed by policy before the requeue) and the held attempt's.
    s.leases[1] = { ...s.leases[1]!, status: "destroyed", sandboxExists: false, agentNeverStarted: true };
    s.leases.push({ id: "l2b", runId: R2, status: "released", provider: "local", providerLeaseId: "local-l2b", sandboxExists: true, stoppedAndRetained: true, retainedListed: true });
    expect(kinds(s)).toEqual([]);
    // The same destroyed lease with an agent having run on it: the held run's files are gone.
    s.leases[1] = { ...s.leases[1]!, agentNeverStarted: false };
    expect(kinds(s)).toEqual(["held_sandbox_destroyed"]);
  });

  it("died_before_result_unrecovered: a run that failed before its result keeps the sandbox its agent ran in; the destroyed lease of an attempt requeued before its agent started is no violation", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "process_lost", provider: "local" });
    s.coordinators.push({ runId: R3, phase: "terminal_failure", committedAt: null, failureCode: "process_lost" });
    s.actions = [{ id: "a3", runId: R3, cause: FILE_RECOVERY, status: "active" }];
    s.leases.push({ id: "l3a", runId: R3, status: "destroyed", provider: "local", providerLeaseId: "local-l3a", sandboxExists: false, handedToRun: true, agentNeverStarted: true });
    s.leases.push({ id: "l3b", runId: R3, status: "released", provider: "local", providerLeaseId: "local-l3b", sandboxExists: true, handedToRun: true, stoppedAndRetained: true, retainedListed: true });
    expect(kinds(s)).toEqual([]);
    s.leases[2] = { ...s.leases[2]!, agentNeverStarted: false };
    expect(kinds(s)).toEqual(["died_before_result_unrecovered", "held_sandbox_destroyed"]);
  });

  it("a held sandbox the harness's operator verified and then discarded is no violation; unverified it is", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "process_lost", provider: "local" });
    s.actions.push({ id: "f3", runId: R3, cause: FILE_RECOVERY, status: "active" });
    s.leases.push({ id: "l3", runId: R3, status: "destroyed", provider: "local", providerLeaseId: "local-l3", sandboxExists: false, discardedByOperator: true });
    const verified = [ev("operator.discard", { leaseId: "l3", runId: R3, verified: true })];
    const verdict = check(verified, s);
    expect(verdict.violations).toEqual([]);
    expect(verdict.counts.operatorDiscards).toBe(1);
    expect(kinds(s)).toEqual(["died_before_result_unrecovered", "held_sandbox_destroyed"]);
  });

  it("issue 20: a verified operator Discard left unrecorded after the quiet period (lease released with its intent, sandbox gone or not) is a violation, discard_unfinished, reported once; unverified, its sandbox was lost too", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "cancelled", errorCode: "run_stopped", provider: "local" });
    s.actions.push({ id: "f3", runId: R3, cause: FILE_RECOVERY, status: "active" });
    s.leases.push({ id: "l3", runId: R3, status: "released", provider: "local", providerLeaseId: "local-l3", sandboxExists: false, stoppedAndRetained: true, retainedListed: true, discardUnrecorded: true });
    const verified = [ev("operator.discard", { leaseId: "l3", runId: R3, verified: true })];
    const verdict = check(verified, s);
    expect(verdict.violations).toEqual([{ kind: "discard_unfinished", detail: expect.stringContaining("lease l3"), runId: R3 }]);
    expect(verdict.violations[0]!.detail).toContain("(verified)");
    expect(verdict.violations[0]!.detail).toContain("sandbox gone");
    expect(verdict.counts.relaxed).toEqual({});
    // Interrupted before its destroy (the sandbox still on disk): unfinished all the same.
    s.leases[2] = { ...s.leases[2]!, sandboxExists: true };
    expect(check(verified, s).violations).toEqual([{ kind: "discard_unfinished", detail: expect.stringContaining("sandbox still on disk"), runId: R3 }]);
    // Without the operator's verified record the sandbox was lost as well.
    s.leases[2] = { ...s.leases[2]!, sandboxExists: false };
    expect(kinds(s)).toEqual(["discard_unfinished", "held_sandbox_destroyed"]);
    // Recorded (the sweep finished it): no violation.
    s.leases[2] = { ...s.leases[2]!, status: "destroyed", discardUnrecorded: false, discardedByOperator: true, retainedListed: false };
    expect(check(verified, s).violations).toEqual([]);
  });

  it("counts the acquisitions on the same environment and workspace while a lease released after a transient export failure waited for its run's retry", () => {
    const s = cleanState();
    const at = (ms: number) => new Date(Date.parse("2026-01-01T00:00:00.000Z") + ms).toISOString();
    const shared = { environmentId: "e1", executionWorkspaceId: "w1" };
    s.runs.push({ id: R3, issueId: ISSUE, status: "succeeded", errorCode: null, provider: "local" });
    s.leases = [
      { id: "l1", runId: R1, status: "released", provider: "local", providerLeaseId: "local-l1", sandboxExists: true, stoppedAndRetained: true, leasePolicy: "reuse_by_environment", retainedListed: false, ...shared },
      { id: "l2", runId: R2, status: "released", provider: "local", providerLeaseId: "local-l2", sandboxExists: true, stoppedAndRetained: true, leasePolicy: "reuse_by_environment", retainedListed: false, ...shared },
      { id: "l3", runId: R3, status: "destroyed", provider: "local", providerLeaseId: "local-l3", sandboxExists: false, environmentId: "e2", executionWorkspaceId: "w1" },
    ];
    // R1 released l1 as failed at 0.2 s (its export retry committed at 1 s); R2 got another
    // allocation at 0.5 s (a chance, not taken), R3 on another environment does not count, nor does
    // R2's earlier acquisition at 0.1 s.
    s.releases = [{ runId: R1, leaseId: "l1", at: at(200), outcome: "failed" }];
    s.acquisitions = [
      { runId: R1, leaseId: "l1", at: at(0), reused: false },
      { runId: R2, leaseId: "l2", at: at(100), reused: false },
      { runId: R2, leaseId: "l2", at: at(500), reused: true },
      { runId: R3, leaseId: "l3", at: at(600), reused: false },
    ];
    let verdict = check([], s);
    expect(verdict.violations).toEqual([]);
    expect(verdict.counts).toMatchObject({ unsettledReleases: 1, acquisitionsBesideUnsettled: 1, heldLeaseTaken: 0 });
    // Handed l1 itself: the chance taken, a violation.
    s.acquisitions[2] = { runId: R2, leaseId: "l1", at: at(500), reused: true };
    verdict = check([], s);
    expect(verdict.counts).toMatchObject({ unsettledReleases: 1, acquisitionsBesideUnsettled: 1, heldLeaseTaken: 1 });
    expect(formatCounts(verdict)).toMatch(/of them handed a held lease \(held_lease_taken\)\s+1/);
    // A release after a committed run's copyback (outcome committed) opens no window.
    s.releases = [{ runId: R1, leaseId: "l1", at: at(200), outcome: "committed" }];
    expect(check([], s).counts.unsettledReleases).toBe(0);
  });

  it("every violation kind has a test above", () => {
    expect(VIOLATION_KINDS.length).toBe(26);
  });
});
