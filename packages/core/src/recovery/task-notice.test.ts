// R-UI-1, R-UI-2: what the task view shows about recovery, derived in one place.
import { describe, expect, it } from "vitest";
import { COPYBACK_FAILED_CAUSE, EXPORT_LIMIT_CAUSE, EXPORT_RETRY_EXHAUSTED_CAUSE, FILE_RECOVERY_CAUSE, LEGACY_COPYBACK_REPAIR_CAUSE, OWNER_UNVERIFIED_CAUSE } from "../records/causes";
import { RECONSTRUCTION_REFUSALS } from "./reconstruction/contract";
import { TRANSIENT_DELIVERY_REFUSALS } from "./reconstruction/decide-reconstruction";
import {
  CONTINUING_MESSAGE,
  FILES_GIVEN_UP_MESSAGE,
  RECONSTRUCTION_STOPPED_PREFIX,
  RESTORING_MESSAGE,
  deferralMessage,
  deriveTaskNotice,
  type NoticeAction,
  type TaskNotice,
} from "./task-notice";

const T0 = new Date("2025-03-01T10:00:00Z");
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

function action(overrides: Partial<NoticeAction> = {}): NoticeAction {
  return {
    id: "action-1",
    cause: OWNER_UNVERIFIED_CAUSE,
    status: "active",
    runId: "run-1",
    recoveryQueued: false,
    createdAt: T0,
    ...overrides,
  };
}

/** Identifiers a receipt carries: none of them may reach the task view. */
const PID = "4242";
const HOST = "worker-a.internal";
const TOKEN = "c0ffee00-dead-4bee-8f00-0123456789ab";
const BOOT = "0b6c6f0e-1c1a-4c55-9d43-7a1f6f0f0a01";

function messageOf(n: TaskNotice): string {
  return n.kind === "none" ? "" : n.message;
}

function assertNoIdentifiers(text: string): void {
  for (const secret of [PID, HOST, TOKEN, BOOT]) expect(text).not.toContain(secret);
  expect(text).not.toMatch(/\d/);
  expect(text).not.toMatch(/\b(pid|process id|host|hostname|token|boot)\b/i);
  // No shutdown form or manual resume control.
  expect(text).not.toMatch(/\b(shut ?down|kill|resume|attest)\b/i);
}

describe("deriveTaskNotice", () => {
  it("R-UI-2: no open recovery action looks like normal work (no notice)", () => {
    expect(deriveTaskNotice([])).toEqual({ kind: "none" });
  });

  it("R-UI-2: an open unverified-owner hold shows a compact operator-attention notice for its run", () => {
    const notice = deriveTaskNotice([action()]);
    expect(notice).toMatchObject({
      kind: "attention",
      runId: "run-1",
      actionId: "action-1",
      cause: OWNER_UNVERIFIED_CAUSE,
    });
  });

  it("R-FO-1 R-UI-2: an open file-recovery obligation shows a compact needs-an-operator notice naming its run, with no identifiers and no certification asked of the task's user", () => {
    const notice = deriveTaskNotice([action({ cause: FILE_RECOVERY_CAUSE, runId: "run-7", id: "files-1" })]);
    expect(notice).toMatchObject({ kind: "attention", runId: "run-7", actionId: "files-1", cause: FILE_RECOVERY_CAUSE });
    const text = messageOf(notice);
    expect(text).toMatch(/operator/);
    expect(text).toMatch(/kept/);
    expect(text).not.toMatch(/certif|confirm|rerun|retry/i);
    assertNoIdentifiers(text);
    // A resolved obligation shows nothing.
    expect(deriveTaskNotice([action({ cause: FILE_RECOVERY_CAUSE, status: "resolved" })])).toEqual({ kind: "none" });
  });

  it("R-UI-2: an escalated hold is still open and shown", () => {
    expect(deriveTaskNotice([action({ status: "escalated" })]).kind).toBe("attention");
  });

  it("R-UI-2: a hold whose sandbox was discarded says its work is gone, not kept", () => {
    for (const cause of [FILE_RECOVERY_CAUSE, LEGACY_COPYBACK_REPAIR_CAUSE, EXPORT_RETRY_EXHAUSTED_CAUSE]) {
      const kept = deriveTaskNotice([action({ cause })]);
      const gone = deriveTaskNotice([action({ cause, filesGivenUp: true })]);
      expect(messageOf(kept)).toMatch(/kept/);
      expect(messageOf(gone)).toBe(FILES_GIVEN_UP_MESSAGE);
      expect(messageOf(gone)).not.toMatch(/kept/);
    }
  });

  it("R-UI-2: an unknown cause gets the generic attention notice", () => {
    const notice = deriveTaskNotice([action({ cause: "some_future_cause" })]);
    expect(notice).toMatchObject({ kind: "attention", cause: "some_future_cause" });
    expect(messageOf(notice)).toMatch(/operator/);
  });

  it('R-UI-1: an attested (queued) recovery shows only "Restoring saved work…"', () => {
    const notice = deriveTaskNotice([action({ recoveryQueued: true })]);
    expect(notice).toEqual({ kind: "restoring", runId: "run-1", message: "Restoring saved work…" });
    expect(RESTORING_MESSAGE).toBe("Restoring saved work…");
  });

  it("R-UI-1: the notice is removed once commitment resolved the action", () => {
    expect(deriveTaskNotice([action({ recoveryQueued: true, status: "resolved" })])).toEqual({
      kind: "none",
    });
  });

  it.each(["resolved", "cancelled"])("R-UI-2: %s actions are ignored", (status) => {
    expect(deriveTaskNotice([action({ status })])).toEqual({ kind: "none" });
    expect(deriveTaskNotice([action({ status, recoveryQueued: true })])).toEqual({ kind: "none" });
  });

  it("R-UI-2: a resolved action beside an open one shows the open one", () => {
    const notice = deriveTaskNotice([
      action({ id: "old", status: "resolved", createdAt: at(0) }),
      action({ id: "new", createdAt: at(5) }),
    ]);
    expect(notice).toMatchObject({ kind: "attention", actionId: "new" });
  });

  it("R-UI-1: attention wins over restoring (whichever is older)", () => {
    const queuedFirst = [
      action({ id: "queued", recoveryQueued: true, createdAt: at(0) }),
      action({ id: "waiting", createdAt: at(5) }),
    ];
    const waitingFirst = [
      action({ id: "waiting", createdAt: at(0) }),
      action({ id: "queued", recoveryQueued: true, createdAt: at(5) }),
    ];
    for (const actions of [queuedFirst, waitingFirst, [...queuedFirst].reverse()]) {
      expect(deriveTaskNotice(actions)).toMatchObject({ kind: "attention", actionId: "waiting" });
    }
  });

  it("R-UI-2: of several waiting actions the oldest is shown, whatever the input order", () => {
    const older = action({ id: "b-older", runId: "run-1", createdAt: at(0) });
    const newer = action({ id: "a-newer", runId: "run-2", createdAt: at(5) });
    expect(deriveTaskNotice([newer, older])).toMatchObject({
      kind: "attention",
      actionId: "b-older",
      runId: "run-1",
    });
    expect(deriveTaskNotice([older, newer])).toMatchObject({
      kind: "attention",
      actionId: "b-older",
      runId: "run-1",
    });
  });

  it("R-UI-2: equal creation times are ordered by id (deterministic)", () => {
    const a = action({ id: "a", createdAt: at(0) });
    const b = action({ id: "b", createdAt: at(0) });
    expect(deriveTaskNotice([b, a])).toMatchObject({ actionId: "a" });
    expect(deriveTaskNotice([a, b])).toMatchObject({ actionId: "a" });
  });

  it("R-UI-1: restoring names the oldest queued recovery's run", () => {
    const notice = deriveTaskNotice([
      action({ id: "2", runId: "run-2", recoveryQueued: true, createdAt: at(5) }),
      action({ id: "1", runId: "run-1", recoveryQueued: true, createdAt: at(0) }),
    ]);
    expect(notice).toEqual({ kind: "restoring", runId: "run-1", message: RESTORING_MESSAGE });
  });

  it("R-UI-1: the notice messages contain no pid, host or token, nor a shutdown or resume control", () => {
    const notices = [
      deriveTaskNotice([action()]),
      deriveTaskNotice([action({ cause: "some_future_cause" })]),
      deriveTaskNotice([action({ recoveryQueued: true })]),
    ];
    for (const notice of notices) {
      expect(notice.kind).not.toBe("none");
      assertNoIdentifiers(messageOf(notice));
    }
  });

  it("R-UI-1: the whole notice carries only ids of the run and action, never the receipt's identifiers", () => {
    const notice = deriveTaskNotice([action({ id: "action-9", runId: "run-9" })]);
    const keys = Object.keys(notice).sort();
    expect(keys).toEqual(["actionId", "cause", "kind", "message", "runId"]);
    const text = JSON.stringify(notice);
    for (const secret of [PID, HOST, TOKEN, BOOT]) expect(text).not.toContain(secret);
  });

  it("R-UI-2: the attention notice never asks the task's user to certify recovered files", () => {
    const message = messageOf(deriveTaskNotice([action()]));
    expect(message).not.toMatch(/\b(you|your)\b/i);
    expect(message).not.toMatch(/certif|verify that|confirm that/i);
    expect(message).toMatch(/kept/);
  });

  it("R-UI-2: an unverified-owner hold explains itself in its own words, not the generic ones", () => {
    const owner = messageOf(deriveTaskNotice([action()]));
    const generic = messageOf(deriveTaskNotice([action({ cause: "some_future_cause" })]));
    expect(owner).toBe(
      "Saving this task's work back to the workspace was interrupted. The work and its result are kept; an administrator needs to confirm before it continues.",
    );
    expect(generic).toBe(
      "This task's recovery needs an operator's attention. Its saved work is kept.",
    );
  });

  it("R-UI-2: the attention notice is exactly the waiting action's run, id, cause and message", () => {
    expect(
      deriveTaskNotice([action({ id: "action-7", runId: null, cause: "some_future_cause" })]),
    ).toEqual({
      kind: "attention",
      runId: null,
      actionId: "action-7",
      cause: "some_future_cause",
      message: "This task's recovery needs an operator's attention. Its saved work is kept.",
    });
  });

  it("R-EX-1: an exhausted export retry asks for a repaired connection, never names a disk-space cause", () => {
    const notice = deriveTaskNotice([action({ cause: EXPORT_RETRY_EXHAUSTED_CAUSE })]);
    expect(notice).toEqual({
      kind: "attention",
      runId: "run-1",
      actionId: "action-1",
      cause: EXPORT_RETRY_EXHAUSTED_CAUSE,
      message:
        "Saving this task's work back to the workspace kept failing. The work and its result are kept; an operator needs to repair the connection before it continues.",
    });
    expect(messageOf(notice)).not.toMatch(/\b(disk|space|full|quota)\b/i);
    assertNoIdentifiers(messageOf(notice));
  });

  it("R-UA-3 R-UI-2: a limit hold shows the operator-attention notice to members: no identifiers, no limit value or path, no form", () => {
    const notice = deriveTaskNotice([action({ cause: EXPORT_LIMIT_CAUSE })]);
    expect(notice).toMatchObject({ kind: "attention", actionId: "action-1", cause: EXPORT_LIMIT_CAUSE });
    expect(messageOf(notice)).toMatch(/operator needs to help/);
    expect(messageOf(notice)).not.toMatch(/max|\d{3,}|\//);
    assertNoIdentifiers(messageOf(notice));
  });

  it("R-EX-4 R-UI-2: a copyback-failed hold shows its own operator-attention notice: the work is kept, an operator recovers it; no identifiers or codes", () => {
    const notice = deriveTaskNotice([action({ cause: COPYBACK_FAILED_CAUSE })]);
    expect(notice).toMatchObject({ kind: "attention", actionId: "action-1", cause: COPYBACK_FAILED_CAUSE });
    expect(messageOf(notice)).toMatch(/kept in the run's sandbox; an operator needs to recover them/);
    expect(messageOf(notice)).not.toMatch(/conflict|_/);
    assertNoIdentifiers(messageOf(notice));
  });

  it("R-RR-6 R-UI-2: a legacy repair hold is a compact operator-attention notice naming its run; it asks the task's user to certify nothing", () => {
    const notice = deriveTaskNotice([action({ cause: LEGACY_COPYBACK_REPAIR_CAUSE, runId: "run-9", id: "legacy-1" })]);
    expect(notice).toMatchObject({ kind: "attention", runId: "run-9", actionId: "legacy-1", cause: LEGACY_COPYBACK_REPAIR_CAUSE });
    expect(messageOf(notice)).toMatch(/operator needs to recover them/);
    expect(messageOf(notice)).not.toMatch(/confirm|certify|verify/i);
    assertNoIdentifiers(messageOf(notice));
  });

  describe("Continue from saved sources (reconstruction intents)", () => {
    // The hold a reconstruction answers: an exhausted export whose sandbox was discarded.
    const hold = (reconstruction: NoticeAction["reconstruction"], overrides: Partial<NoticeAction> = {}) =>
      action({ cause: EXPORT_RETRY_EXHAUSTED_CAUSE, filesGivenUp: true, reconstruction, ...overrides });

    it("R-UI-2 R-RC-3: before any decision the discarded hold asks an operator how the task goes on", () => {
      expect(deriveTaskNotice([hold(null)])).toMatchObject({ kind: "attention", message: FILES_GIVEN_UP_MESSAGE });
    });

    it("R-RC-3 R-UI-1: a pending intent shows the calm continuing notice, not 'Needs an operator' and not 'Restoring saved work'", () => {
      const notice = deriveTaskNotice([hold({ status: "pending", refusalCode: null })]);
      expect(notice).toEqual({ kind: "restoring", runId: "run-1", message: CONTINUING_MESSAGE });
      expect(CONTINUING_MESSAGE).not.toBe(RESTORING_MESSAGE);
      assertNoIdentifiers(messageOf(notice));
    });

    it("R-RC-5 R-UI-2: another hold still waiting for a person wins over the pending intent (its delivery waits for it)", () => {
      const other = action({ id: "file-1", cause: FILE_RECOVERY_CAUSE, runId: "run-2", createdAt: at(5) });
      expect(deriveTaskNotice([hold({ status: "pending", refusalCode: null }), other])).toMatchObject({ kind: "attention", actionId: "file-1" });
    });

    it("R-RC-5 R-UI-2: a refused delivery (a later human block) shows the attention notice again with a plain reason", () => {
      const notice = deriveTaskNotice([hold({ status: "cancelled", refusalCode: "human_block" })]);
      expect(notice).toMatchObject({ kind: "attention", actionId: "action-1", runId: "run-1", cause: EXPORT_RETRY_EXHAUSTED_CAUSE });
      expect(messageOf(notice).startsWith(RECONSTRUCTION_STOPPED_PREFIX)).toBe(true);
      expect(messageOf(notice)).toMatch(/person blocked or reassigned/);
      expect(messageOf(notice)).toMatch(/operator needs to decide again/);
      expect(messageOf(notice)).not.toContain("human_block");
      assertNoIdentifiers(messageOf(notice));
    });

    it("R-RC-5: changed attachments ask for the saved sources to be chosen again", () => {
      for (const code of ["attachment_changed", "attachment_unavailable", "foreign_attachment"]) {
        expect(messageOf(deriveTaskNotice([hold({ status: "cancelled", refusalCode: code })]))).toMatch(/choose the saved sources again/);
      }
    });

    it("R-RC-5 R-UI-2: every refusal code, an unknown one and none recorded word the notice plainly: no code, id, digit or process detail", () => {
      for (const code of [...Object.keys(RECONSTRUCTION_REFUSALS), "something_new", null]) {
        const notice = deriveTaskNotice([hold({ status: "cancelled", refusalCode: code })]);
        expect(notice.kind).toBe("attention");
        const text = messageOf(notice);
        expect(text.startsWith(RECONSTRUCTION_STOPPED_PREFIX)).toBe(true);
        expect(text).toMatch(/operator|person|Reopen/);
        expect(text).not.toMatch(/_/);
        assertNoIdentifiers(text);
      }
    });

    it("R-RC-5: a delivered intent resolved its hold: normal work, no notice", () => {
      expect(deriveTaskNotice([hold({ status: "delivered", refusalCode: null }, { status: "resolved" })])).toEqual({ kind: "none" });
    });

    describe("a deferred delivery (R-RC-3: the notice while the decision waits)", () => {
      const deferred = (code: string) => hold({ status: "pending", refusalCode: null, deferral: { code, since: at(1), lastSeenAt: at(3) } });
      const waitingOf = (n: TaskNotice): string => (n.kind === "restoring" ? (n.waiting ?? "") : "");

      it("R-RC-3: another recovery action still open: the continuing notice gains the sentence that it must be settled first", () => {
        const notice = deriveTaskNotice([deferred("recovery_hold_open")]);
        expect(notice).toEqual({ kind: "restoring", runId: "run-1", message: CONTINUING_MESSAGE, waiting: "Waiting: another recovery action on this task must be settled first." });
      });

      it("R-RC-3: the task's current run: the sentence says it waits for that run to end", () => {
        expect(waitingOf(deriveTaskNotice([deferred("issue_run_active")]))).toBe("Waiting for the task's current run to end.");
      });

      it("R-RC-3: every transient delivery refusal has its own calm sentence; none names a code, id, digit or process detail; only recovery_hold_open asks for a person", () => {
        const sentences = new Set<string>();
        for (const code of TRANSIENT_DELIVERY_REFUSALS) {
          const notice = deriveTaskNotice([deferred(code)]);
          expect(notice).toMatchObject({ kind: "restoring", message: CONTINUING_MESSAGE });
          const text = waitingOf(notice);
          expect(text).toBe(deferralMessage(code));
          expect(text).toMatch(/^Waiting\b.*\.$/);
          expect(text).not.toMatch(/_/);
          expect(text).not.toMatch(/operator needs|you need|must decide/i);
          if (code !== "recovery_hold_open") expect(text).not.toMatch(/\bmust\b/);
          assertNoIdentifiers(text);
          sentences.add(text);
        }
        expect(sentences.size).toBe(TRANSIENT_DELIVERY_REFUSALS.length);
      });

      it("R-RC-3: an unknown code (a wake refusal) reads as a fixed, plain sentence", () => {
        const text = waitingOf(deriveTaskNotice([deferred("agent_archived")]));
        expect(text).toBe(deferralMessage("something_new"));
        expect(text).not.toContain("agent_archived");
        assertNoIdentifiers(text);
      });

      it("R-RC-3: no deferral recorded: the continuing notice alone (no sentence)", () => {
        expect(deriveTaskNotice([hold({ status: "pending", refusalCode: null, deferral: null })])).toEqual({ kind: "restoring", runId: "run-1", message: CONTINUING_MESSAGE });
      });

      it("R-RC-3 R-UI-1: a queued owner restore (the older) reads as restoring with no waiting sentence of the intent", () => {
        const attested = action({ id: "owner-1", recoveryQueued: true, createdAt: at(-5), runId: "run-0" });
        expect(deriveTaskNotice([deferred("recovery_hold_open"), attested])).toEqual({ kind: "restoring", runId: "run-0", message: RESTORING_MESSAGE });
      });

      it("R-RC-5 R-UI-2: a person's hold still wins over a deferred intent", () => {
        const other = action({ id: "file-1", cause: FILE_RECOVERY_CAUSE, runId: "run-2", createdAt: at(5) });
        expect(deriveTaskNotice([deferred("recovery_hold_open"), other])).toMatchObject({ kind: "attention", actionId: "file-1" });
      });
    });

    it("R-UI-1 R-RC-3: a queued owner restore and a pending intent together read as restoring (the older first)", () => {
      const attested = action({ id: "owner-1", recoveryQueued: true, createdAt: at(-5), runId: "run-0" });
      expect(deriveTaskNotice([hold({ status: "pending", refusalCode: null }), attested])).toEqual({ kind: "restoring", runId: "run-0", message: RESTORING_MESSAGE });
    });
  });
});
