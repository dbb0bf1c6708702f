// R-ORP-1, R-ORP-2: generic orphan handling of a running native run whose controller is gone,
// table-driven.
import type { FinalizationPhase } from "@copyback/db/client";
import { describe, expect, it } from "vitest";
import type { ProcessLiveness } from "../../process/process-identity";
import {
  FINALIZER_OWNED_PHASES,
  decideOrphan,
  type OrphanDecision,
  type OrphanSnapshot,
} from "./decide-orphan";

const COMPANY = "company-1";
const ISSUE = "issue-1";
const RESULT = "result-1";
const DEAD: ProcessLiveness = { kind: "dead", reason: "no_such_pid" };

type Overrides = Omit<Partial<OrphanSnapshot>, "coordinator"> & {
  coordinator?: Partial<NonNullable<OrphanSnapshot["coordinator"]>> | null;
};

/** A dead controller, a coordinator in workspace_finalizing and an accepted result, all bound to the run. */
function snap(o: Overrides = {}): OrphanSnapshot {
  const { coordinator, ...rest } = o;
  return {
    controller: DEAD,
    run: { companyId: COMPANY, issueId: ISSUE },
    acceptedResult: { id: RESULT, companyId: COMPANY, issueId: ISSUE },
    ...rest,
    coordinator:
      coordinator === null
        ? null
        : {
            phase: "workspace_finalizing",
            resultId: RESULT,
            companyId: COMPANY,
            issueId: ISSUE,
            ...coordinator,
          },
  };
}

const FINALIZER_OWNS: OrphanDecision = { kind: "leave", reason: "finalizer_owns" };
const LOST: OrphanDecision = { kind: "process_lost" };

describe("decideOrphan", () => {
  it("R-ORP-1: the finalizer owns result_accepted, workspace_finalizing, arbitrating and retryable_failure", () => {
    expect([...FINALIZER_OWNED_PHASES].sort()).toEqual([
      "arbitrating",
      "result_accepted",
      "retryable_failure",
      "workspace_finalizing",
    ]);
  });

  it.each<[string, ProcessLiveness, OrphanDecision]>([
    [
      "R-ORP-1: a live controller is left alone",
      { kind: "alive" },
      { kind: "leave", reason: "controller_alive" },
    ],
    [
      "R-ORP-4: a controller on another host is unobservable and left alone",
      { kind: "unknown", reason: "other_host" },
      { kind: "leave", reason: "controller_unobservable" },
    ],
    [
      "R-ORP-4: an unreadable controller is left alone",
      { kind: "unknown", reason: "unreadable" },
      { kind: "leave", reason: "controller_unobservable" },
    ],
  ])("%s (even without any result)", (_name, controller, expected) => {
    expect(decideOrphan(snap({ controller, acceptedResult: null, coordinator: null }))).toEqual(
      expected,
    );
  });

  it.each<FinalizationPhase>([
    "result_accepted",
    "workspace_finalizing",
    "arbitrating",
    "retryable_failure",
  ])(
    "R-ORP-1: a missing PID is never process_lost while the coordinator is %s with the bound accepted result",
    (phase) => {
      expect(decideOrphan(snap({ coordinator: { phase } }))).toEqual(FINALIZER_OWNS);
    },
  );

  it.each<[string, ProcessLiveness]>([
    ["no such pid", { kind: "dead", reason: "no_such_pid" }],
    ["pid reused", { kind: "dead", reason: "pid_reused" }],
    ["rebooted", { kind: "dead", reason: "rebooted" }],
    ["zombie", { kind: "dead", reason: "zombie" }],
  ])(
    "R-ORP-1: a dead controller (%s) under workspace_finalizing with the bound result belongs to the finalizer",
    (_name, controller) => {
      expect(decideOrphan(snap({ controller }))).toEqual(FINALIZER_OWNS);
    },
  );

  it("R-ORP-1: also before the finalizer took its receipt (result_accepted, nothing else known about the owner)", () => {
    expect(decideOrphan(snap({ coordinator: { phase: "result_accepted" } }))).toEqual(
      FINALIZER_OWNS,
    );
  });

  it.each<[string, Overrides, OrphanDecision]>([
    [
      "R-ORP-1: a committed coordinator settles the run as committed",
      { coordinator: { phase: "committed" } },
      { kind: "settle", as: "committed" },
    ],
    [
      "R-ORP-1: a terminal coordinator settles the run as terminal_failure",
      { coordinator: { phase: "terminal_failure" } },
      { kind: "settle", as: "terminal_failure" },
    ],
    [
      "R-ORP-1: a committed coordinator settles even without an accepted result row",
      { coordinator: { phase: "committed" }, acceptedResult: null },
      { kind: "settle", as: "committed" },
    ],
    [
      "R-ORP-1: no coordinator and no accepted result: process_lost",
      { coordinator: null, acceptedResult: null },
      LOST,
    ],
    [
      "R-ORP-1: an observed coordinator without an accepted result: process_lost",
      { coordinator: { phase: "observed", resultId: null }, acceptedResult: null },
      LOST,
    ],
    [
      "R-ORP-1: the coordinator's phase alone does not establish the finalizer's authority (no accepted result)",
      { coordinator: { phase: "workspace_finalizing" }, acceptedResult: null },
      LOST,
    ],
    [
      "R-ORP-1: a coordinator result id without the accepted result row does not establish it",
      { coordinator: { phase: "result_accepted", resultId: RESULT }, acceptedResult: null },
      LOST,
    ],
    [
      "R-ORP-2: an accepted result whose coordinator has not caught up (observed) is never lost",
      { coordinator: { phase: "observed", resultId: null } },
      FINALIZER_OWNS,
    ],
    [
      "R-ORP-2: an accepted result without a coordinator row is never lost",
      { coordinator: null },
      FINALIZER_OWNS,
    ],
    [
      "R-ORP-2: an accepted result with the coordinator naming another result is never lost",
      { coordinator: { resultId: "result-2" } },
      FINALIZER_OWNS,
    ],
  ])("%s", (_name, overrides, expected) => {
    expect(decideOrphan(snap(overrides))).toEqual(expected);
  });
});
