// R-ATT-3: admission of an operator's stop attestation, table-driven. One row per rejection
// code, each one change away from a snapshot that is admitted.
import type { FinalizationPhase } from "@copyback/db/client";
import { describe, expect, it } from "vitest";
import type { ProcessLiveness } from "../../process/process-identity";
import type { BindingSnapshot } from "../../finalization/binding";
import { OWNER_UNVERIFIED_CAUSE } from "../../records/causes";
import {
  ATTESTABLE_PHASES,
  decideAttestation,
  type AttestationDecision,
  type AttestationRejectCode,
  type AttestationSnapshot,
} from "./decide-attestation";

const RUN = "run-1";
const ISSUE = "issue-1";
const COMPANY = "company-1";
const RESULT = "result-1";
const TOKEN = "tok-old";
const SHA = "a".repeat(64);
const MALFORMED_TOKEN = `malformed-receipt:sha256:${SHA}`;

function binding(overrides: Partial<BindingSnapshot> = {}): BindingSnapshot {
  return {
    run: { id: RUN, companyId: COMPANY, issueId: ISSUE, agentId: "agent-1", status: "running", runtimeMode: "native" },
    issue: {
      id: ISSUE,
      companyId: COMPANY,
      assigneeAgentId: "agent-1",
      status: "in_progress",
      executionRunId: RUN,
      checkoutRunId: RUN,
    },
    coordinator: { phase: "workspace_finalizing", resultId: RESULT },
    acceptedResultId: RESULT,
    otherActiveRunIds: [],
    ...overrides,
  };
}

type Overrides = Omit<Partial<AttestationSnapshot>, "action" | "binding"> & {
  action?: Partial<AttestationSnapshot["action"]>;
  binding?: Partial<BindingSnapshot>;
};

function snap(o: Overrides = {}): AttestationSnapshot {
  const { action, binding: b, ...rest } = o;
  return {
    request: { runId: RUN, ownerToken: TOKEN },
    lockAcquired: true,
    receipt: { kind: "receipt", token: TOKEN },
    liveness: { kind: "dead", reason: "no_such_pid" },
    ...rest,
    action: {
      cause: OWNER_UNVERIFIED_CAUSE,
      status: "active",
      runId: RUN,
      attestationToken: TOKEN,
      receiptSha256: null,
      attestedToken: null,
      ...action,
    },
    binding: binding(b),
  };
}

function codeOf(d: AttestationDecision): AttestationRejectCode | null {
  return d.kind === "reject" ? d.code : null;
}

const ADMIT: AttestationDecision = { kind: "admit" };

describe("decideAttestation", () => {
  it("R-ATT-3: a stopped owner of a bound run with the exact token is admitted", () => {
    expect(decideAttestation(snap())).toEqual(ADMIT);
  });

  it("R-ATT-3: admission works from result_accepted, workspace_finalizing and retryable_failure only", () => {
    expect([...ATTESTABLE_PHASES].sort()).toEqual([
      "result_accepted",
      "retryable_failure",
      "workspace_finalizing",
    ]);
  });

  it.each<FinalizationPhase>(["result_accepted", "workspace_finalizing", "retryable_failure"])(
    "R-ATT-3: admitted from %s",
    (phase) => {
      expect(
        decideAttestation(snap({ binding: { coordinator: { phase, resultId: RESULT } } })),
      ).toEqual(ADMIT);
    },
  );

  it.each<FinalizationPhase>(["observed", "arbitrating", "committed", "terminal_failure"])(
    "R-ATT-3: phase_not_resumable from %s",
    (phase) => {
      expect(
        codeOf(decideAttestation(snap({ binding: { coordinator: { phase, resultId: RESULT } } }))),
      ).toBe("phase_not_resumable");
    },
  );

  it.each<[string, Overrides, AttestationRejectCode]>([
    [
      "R-ATT-3: action_not_owner_unverified: another cause cannot release an owner",
      { action: { cause: "native_workspace_export_failed" } },
      "action_not_owner_unverified",
    ],
    [
      "R-ATT-3: action_not_open: a resolved action",
      { action: { status: "resolved" } },
      "action_not_open",
    ],
    [
      "R-ATT-3: action_not_open: a cancelled action",
      { action: { status: "cancelled" } },
      "action_not_open",
    ],
    [
      "R-ATT-3: run_mismatch: the action belongs to another run",
      { action: { runId: "run-2" } },
      "run_mismatch",
    ],
    ["R-ATT-3: run_mismatch: the action has no run", { action: { runId: null } }, "run_mismatch"],
    [
      "R-ATT-3: run_mismatch: the request names another run",
      { request: { runId: "run-2", ownerToken: TOKEN } },
      "run_mismatch",
    ],
    [
      "R-ATT-3: copyback_lock_active: a copyback holds the run's advisory lock",
      { lockAcquired: false },
      "copyback_lock_active",
    ],
    [
      "R-ATT-3: owner_changed: the request names a token the action does not hold",
      { request: { runId: RUN, ownerToken: "tok-guess" } },
      "owner_changed",
    ],
    [
      "R-ATT-3: owner_receipt_malformed: a malformed receipt's hold from before receipt hashes names nothing to release (the next pass replaces it)",
      { action: { attestationToken: null } },
      "owner_receipt_malformed",
    ],
    [
      "R-ATT-3: owner_changed: the run carries a newer owner receipt",
      { receipt: { kind: "receipt", token: "tok-new" } },
      "owner_changed",
    ],
    [
      "R-ATT-3: owner_changed: the receipt is gone and this action never attested it",
      { receipt: { kind: "none" }, liveness: null },
      "owner_changed",
    ],
    [
      "R-ATT-3: owner_receipt_malformed: the run's receipt cannot be read",
      { receipt: { kind: "malformed", sha256: SHA }, liveness: null },
      "owner_receipt_malformed",
    ],
    [
      "R-ATT-3: controller_alive: an observably live local controller",
      { liveness: { kind: "alive" } },
      "controller_alive",
    ],
    ["R-ATT-3: run_not_found: no run", { binding: { run: null } }, "run_not_found"],
    ["R-ATT-3: run_not_found: no task", { binding: { issue: null } }, "run_not_found"],
    [
      "R-ATT-3: run_not_native: a legacy run",
      {
        binding: {
          run: {
            id: RUN,
            companyId: COMPANY,
            issueId: ISSUE,
            agentId: "agent-1",
            status: "running",
            runtimeMode: "legacy",
          },
        },
      },
      "run_not_native",
    ],
    [
      "R-ATT-3: run_not_running: the run already ended",
      {
        binding: {
          run: {
            id: RUN,
            companyId: COMPANY,
            issueId: ISSUE,
            agentId: "agent-1",
            status: "failed",
            runtimeMode: "native",
          },
        },
      },
      "run_not_running",
    ],
    [
      "R-ATT-3: task_closed: the task was cancelled",
      {
        binding: {
          issue: {
            id: ISSUE,
            companyId: COMPANY,
            assigneeAgentId: "agent-1",
            status: "cancelled",
            executionRunId: RUN,
            checkoutRunId: RUN,
          },
        },
      },
      "task_closed",
    ],
    [
      "R-ATT-3: newer_execution: the task is bound to another execution",
      {
        binding: {
          issue: {
            id: ISSUE,
            companyId: COMPANY,
            assigneeAgentId: "agent-1",
            status: "in_progress",
            executionRunId: "run-2",
            checkoutRunId: null,
          },
        },
      },
      "newer_execution",
    ],
    [
      "R-ATT-3: checkout_changed: another run holds the checkout",
      {
        binding: {
          issue: {
            id: ISSUE,
            companyId: COMPANY,
            assigneeAgentId: "agent-1",
            status: "in_progress",
            executionRunId: RUN,
            checkoutRunId: "run-2",
          },
        },
      },
      "checkout_changed",
    ],
    [
      "R-ATT-3: newer_run: another run of the task is queued or running",
      { binding: { otherActiveRunIds: ["run-2"] } },
      "newer_run",
    ],
    [
      "R-ATT-3: result_unbound: the coordinator's result is not the accepted result",
      { binding: { coordinator: { phase: "workspace_finalizing", resultId: "result-2" } } },
      "result_unbound",
    ],
    [
      "R-ATT-3: result_unbound: no accepted result",
      { binding: { acceptedResultId: null } },
      "result_unbound",
    ],
    [
      "R-ATT-3: phase_not_resumable: the coordinator already committed",
      { binding: { coordinator: { phase: "committed", resultId: RESULT } } },
      "phase_not_resumable",
    ],
  ])("%s", (_name, overrides, code) => {
    const decision = decideAttestation(snap(overrides));
    expect(codeOf(decision)).toBe(code);
    if (decision.kind === "reject") {
      expect(decision.message.length).toBeGreaterThan(0);
      // The refusal names what changed, never the secret it was given.
      expect(decision.message).not.toContain(TOKEN);
    }
  });

  it("R-ATT-3: a missing advisory connection alone is not enough: a free lock with a live controller is refused", () => {
    expect(
      codeOf(decideAttestation(snap({ lockAcquired: true, liveness: { kind: "alive" } }))),
    ).toBe("controller_alive");
  });

  it("R-ATT-3: a free lock with a changed owner is refused", () => {
    expect(
      codeOf(
        decideAttestation(
          snap({ lockAcquired: true, receipt: { kind: "receipt", token: "tok-new" } }),
        ),
      ),
    ).toBe("owner_changed");
  });

  it.each<[string, ProcessLiveness | null]>([
    ["unknown on a foreign host", { kind: "unknown", reason: "other_host" }],
    ["unknown (unreadable)", { kind: "unknown", reason: "unreadable" }],
    ["dead (no such pid)", { kind: "dead", reason: "no_such_pid" }],
    ["dead (pid reused)", { kind: "dead", reason: "pid_reused" }],
    ["dead (rebooted)", { kind: "dead", reason: "rebooted" }],
    ["not probed", null],
  ])(
    "R-ATT-3: liveness %s does not block attestation (only an observably live local controller does)",
    (_name, liveness) => {
      expect(decideAttestation(snap({ liveness }))).toEqual(ADMIT);
    },
  );

  it("R-ATT-3: an escalated action is open and may be attested", () => {
    expect(decideAttestation(snap({ action: { status: "escalated" } }))).toEqual(ADMIT);
  });

  describe("R-ATT-3: idempotent repeat, never releasing a newer owner", () => {
    it("R-ATT-3: a missing receipt whose release this action recorded for the same token is already attested", () => {
      expect(
        decideAttestation(
          snap({ receipt: { kind: "none" }, liveness: null, action: { attestedToken: TOKEN } }),
        ),
      ).toEqual({ kind: "already_attested" });
    });

    it("R-ATT-3: a missing receipt with an attestation of another token is owner_changed", () => {
      expect(
        codeOf(
          decideAttestation(
            snap({
              receipt: { kind: "none" },
              liveness: null,
              action: { attestedToken: "tok-other" },
            }),
          ),
        ),
      ).toBe("owner_changed");
    });

    it("R-ATT-3: a missing receipt without any recorded attestation is owner_changed (the SQL fallback or a clear released it)", () => {
      expect(
        codeOf(
          decideAttestation(
            snap({ receipt: { kind: "none" }, liveness: null, action: { attestedToken: null } }),
          ),
        ),
      ).toBe("owner_changed");
    });

    it("R-ATT-3: after an attestation, repeating it answers already_attested, which writes nothing, so a newer owner's receipt is never released", () => {
      const repeated = snap({
        receipt: { kind: "receipt", token: "tok-new" },
        action: { attestedToken: TOKEN },
      });
      expect(decideAttestation(repeated)).toEqual({ kind: "already_attested" });
      expect(
        decideAttestation({ ...repeated, liveness: { kind: "dead", reason: "no_such_pid" }, lockAcquired: true }),
      ).toEqual({ kind: "already_attested" });
    });

    it("R-ATT-3: naming the newer token on the older action is refused (the action holds the older token)", () => {
      expect(
        codeOf(
          decideAttestation(
            snap({
              request: { runId: RUN, ownerToken: "tok-new" },
              receipt: { kind: "receipt", token: "tok-new" },
            }),
          ),
        ),
      ).toBe("owner_changed");
    });

    it("R-ATT-3: a repeat while the reconciler's copyback holds the lock is still idempotent (nothing to write)", () => {
      expect(
        decideAttestation(
          snap({ lockAcquired: false, receipt: { kind: "none" }, liveness: null, action: { attestedToken: TOKEN } }),
        ),
      ).toEqual({ kind: "already_attested" });
    });

    it("R-ATT-3: a repeat on a resolved (committed) action is refused as not open", () => {
      expect(
        codeOf(
          decideAttestation(
            snap({
              receipt: { kind: "none" },
              liveness: null,
              action: { status: "resolved", attestedToken: TOKEN },
            }),
          ),
        ),
      ).toBe("action_not_open");
    });
  });
});

describe("R-ATT-3: a malformed receipt's hold", () => {
  const malformed = (o: Overrides = {}) =>
    snap({
      request: { runId: RUN, ownerToken: MALFORMED_TOKEN },
      receipt: { kind: "malformed", sha256: SHA },
      liveness: null,
      ...o,
      action: { attestationToken: MALFORMED_TOKEN, receiptSha256: SHA, ...o.action },
    });
  const codeOfDecision = (d: AttestationDecision) => (d.kind === "reject" ? d.code : d.kind);
  it("R-ATT-3: admitted when the request names the hold's fixed reference and the run still carries exactly that receipt", () => {
    expect(decideAttestation(malformed())).toEqual({ kind: "admit" });
  });
  it.each<[string, Overrides, AttestationRejectCode]>([
    ["the request names another reference", { request: { runId: RUN, ownerToken: `malformed-receipt:sha256:${"b".repeat(64)}` } }, "owner_changed"],
    ["the request names the bare hash", { request: { runId: RUN, ownerToken: SHA } }, "owner_changed"],
    ["the run carries another malformed receipt", { receipt: { kind: "malformed", sha256: "c".repeat(64) } }, "owner_changed"],
    ["the run carries a well-formed owner now (even one whose token equals the reference)", { receipt: { kind: "receipt", token: MALFORMED_TOKEN } }, "owner_changed"],
    ["the receipt is gone and this action never attested it", { receipt: { kind: "none" } }, "owner_changed"],
    ["a copyback holds the lock", { lockAcquired: false }, "copyback_lock_active"],
    ["another run", { request: { runId: "run-2", ownerToken: MALFORMED_TOKEN } }, "run_mismatch"],
    ["a task that moved on", { binding: { issue: { ...binding().issue!, status: "done" } } }, "task_closed"],
  ])("R-ATT-3: refused: %s", (_name, o, code) => {
    expect(codeOfDecision(decideAttestation(malformed(o)))).toBe(code);
  });
  it("R-ATT-3: a repeat after the release is idempotent", () => {
    expect(decideAttestation(malformed({ receipt: { kind: "none" }, action: { attestedToken: MALFORMED_TOKEN } }))).toEqual({ kind: "already_attested" });
  });
});

