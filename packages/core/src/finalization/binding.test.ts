// R-RW-4, R-ATT-3: THE binding check (checkRunBinding), table-driven. Old work may reach the host
// only while the task is still bound to that exact running native run and its accepted result.
import type { FinalizationPhase } from "@copyback/db/client";
import { describe, expect, it } from "vitest";
import { FINALIZATION_PHASES } from "../records/coordinator-phases";
import {
  checkRunBinding,
  type BindingDecision,
  type BindingRejectCode,
  type BindingSnapshot,
} from "./binding";

const RUN = "run-1";
const ISSUE = "issue-1";
const COMPANY = "company-1";
const RESULT = "result-1";
const RESUMABLE: readonly FinalizationPhase[] = [
  "result_accepted",
  "workspace_finalizing",
  "retryable_failure",
];

type Overrides = {
  run?: Partial<NonNullable<BindingSnapshot["run"]>> | null;
  issue?: Partial<NonNullable<BindingSnapshot["issue"]>> | null;
  coordinator?: Partial<NonNullable<BindingSnapshot["coordinator"]>> | null;
  acceptedResultId?: string | null;
  otherActiveRunIds?: string[];
};

function snap(o: Overrides = {}): BindingSnapshot {
  return {
    run:
      o.run === null
        ? null
        : {
            id: RUN,
            companyId: COMPANY,
            issueId: ISSUE,
            agentId: "agent-1",
            status: "running",
            runtimeMode: "native",
            ...o.run,
          },
    issue:
      o.issue === null
        ? null
        : {
            id: ISSUE,
            companyId: COMPANY,
            status: "in_progress",
            assigneeAgentId: "agent-1",
            executionRunId: RUN,
            checkoutRunId: RUN,
            ...o.issue,
          },
    coordinator:
      o.coordinator === null
        ? null
        : { phase: "workspace_finalizing", resultId: RESULT, ...o.coordinator },
    acceptedResultId: o.acceptedResultId === undefined ? RESULT : o.acceptedResultId,
    otherActiveRunIds: o.otherActiveRunIds ?? [],
  };
}

function codeOf(d: BindingDecision): BindingRejectCode | null {
  return d.kind === "reject" ? d.code : null;
}

const BOUND: BindingDecision = { kind: "bound", resultId: RESULT };

describe("checkRunBinding", () => {
  it("R-RW-4: an open task bound to the running native run and its accepted result is bound", () => {
    expect(checkRunBinding(snap(), RESUMABLE)).toEqual(BOUND);
  });

  it.each<[string, Overrides]>([
    ["no checkout holder", { issue: { checkoutRunId: null } }],
    ["the task in review", { issue: { status: "in_review" } }],
    ["the task blocked", { issue: { status: "blocked" } }],
    ["the task todo", { issue: { status: "todo" } }],
    ["the task in backlog", { issue: { status: "backlog" } }],
  ])("R-RW-4: still bound with %s", (_name, overrides) => {
    expect(checkRunBinding(snap(overrides), RESUMABLE)).toEqual(BOUND);
  });

  it.each<[string, Overrides, BindingRejectCode]>([
    ["R-RW-4: run_not_found: no run", { run: null }, "run_not_found"],
    ["R-RW-4: run_not_found: no task", { issue: null }, "run_not_found"],
    [
      "R-RW-4: run_not_found: the task is another issue than the run's",
      { issue: { id: "issue-2" } },
      "run_not_found",
    ],
    [
      "R-RW-4: run_not_found: the task belongs to another company",
      { issue: { companyId: "company-2" } },
      "run_not_found",
    ],
    ["R-RW-4: run_not_native: a legacy run", { run: { runtimeMode: "legacy" } }, "run_not_native"],
    ["R-RW-4: task_reassigned: the task is assigned to another agent", { issue: { assigneeAgentId: "agent-2" } }, "task_reassigned"],
    ["R-RW-4: task_reassigned: the task is unassigned", { issue: { assigneeAgentId: null } }, "task_reassigned"],
    ["R-RW-4: run_not_running: a queued run", { run: { status: "queued" } }, "run_not_running"],
    ["R-RW-4: run_not_running: a failed run", { run: { status: "failed" } }, "run_not_running"],
    [
      "R-RW-4: run_not_running: a succeeded run",
      { run: { status: "succeeded" } },
      "run_not_running",
    ],
    [
      "R-RW-4: run_not_running: a cancelled run",
      { run: { status: "cancelled" } },
      "run_not_running",
    ],
    [
      "R-RW-4: run_not_running: a timed-out run",
      { run: { status: "timed_out" } },
      "run_not_running",
    ],
    ["R-RW-4: task_closed: the task is done", { issue: { status: "done" } }, "task_closed"],
    [
      "R-RW-4: task_closed: the task is cancelled",
      { issue: { status: "cancelled" } },
      "task_closed",
    ],
    [
      "R-RW-4: newer_execution: the task executes another run",
      { issue: { executionRunId: "run-2", checkoutRunId: "run-2" } },
      "newer_execution",
    ],
    [
      "R-RW-4: newer_execution: the task executes no run",
      { issue: { executionRunId: null } },
      "newer_execution",
    ],
    [
      "R-RW-4: checkout_changed: another run holds the checkout",
      { issue: { checkoutRunId: "run-2" } },
      "checkout_changed",
    ],
    [
      "R-RW-4: newer_run: another queued or running run of the task",
      { otherActiveRunIds: ["run-2"] },
      "newer_run",
    ],
    [
      "R-RW-4: newer_run: several other runs (a queued/running legacy execution included)",
      { otherActiveRunIds: ["run-2", "legacy-run-3"] },
      "newer_run",
    ],
    [
      "R-RW-4: result_unbound: the coordinator result differs from the accepted result",
      { coordinator: { resultId: "result-2" } },
      "result_unbound",
    ],
    ["R-RW-4: result_unbound: no accepted result", { acceptedResultId: null }, "result_unbound"],
    [
      "R-RW-4: result_unbound: the coordinator has no result",
      { coordinator: { resultId: null } },
      "result_unbound",
    ],
    [
      "R-RW-4: result_unbound: no coordinator and no accepted result",
      { coordinator: null, acceptedResultId: null },
      "result_unbound",
    ],
    ["R-RW-4: result_unbound: no coordinator", { coordinator: null }, "result_unbound"],
    [
      "R-RW-4: phase_not_resumable: a phase not allowed",
      { coordinator: { phase: "arbitrating" } },
      "phase_not_resumable",
    ],
  ])("%s", (_name, overrides, code) => {
    const decision = checkRunBinding(snap(overrides), RESUMABLE);
    expect(codeOf(decision)).toBe(code);
    if (decision.kind === "reject") expect(decision.message.length).toBeGreaterThan(0);
  });

  it.each<FinalizationPhase>([...FINALIZATION_PHASES])("R-RW-4: phase %s is bound exactly when the caller allows it", (phase) => {
    const s = snap({ coordinator: { phase } });
    expect(checkRunBinding(s, [phase])).toEqual(BOUND);
    const others = FINALIZATION_PHASES.filter((p) => p !== phase);
    expect(codeOf(checkRunBinding(s, others))).toBe("phase_not_resumable");
    expect(codeOf(checkRunBinding(s, []))).toBe("phase_not_resumable");
  });

  it("R-RW-4: a closed task wins over a newer run (the first change is named)", () => {
    expect(
      codeOf(
        checkRunBinding(
          snap({ issue: { status: "done" }, otherActiveRunIds: ["run-2"] }),
          RESUMABLE,
        ),
      ),
    ).toBe("task_closed");
  });

  it("R-RW-4: the binding ids are compared exactly, not by prefix or case", () => {
    expect(
      codeOf(checkRunBinding(snap({ issue: { executionRunId: RUN.toUpperCase() } }), RESUMABLE)),
    ).toBe("newer_execution");
    expect(
      codeOf(checkRunBinding(snap({ coordinator: { resultId: `${RESULT} ` } }), RESUMABLE)),
    ).toBe("result_unbound");
  });
});
