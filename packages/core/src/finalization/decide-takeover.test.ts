// R-OWN-8, R-OWN-10, R-OWN-11, R-OWN-12, R-ORP-4: the takeover policy, table-driven. No
// database: a snapshot in, a decision out.
import { afterEach, describe, expect, it, vi } from "vitest";
import { decideLiveness, type ProcessObservation } from "../process/liveness-policy";
import type { ProcStat } from "../process/proc-stat";
import type { ProcessIdentity, ProcessLiveness } from "../process/process-identity";
import {
  decideTakeover,
  type ReceiptView,
  type TakeoverDecision,
  type TakeoverSnapshot,
} from "./decide-takeover";

const HOST = "worker-a";
const BOOT = "0b6c6f0e-1c1a-4c55-9d43-7a1f6f0f0a01";

/** The recorded controller of the receipt. */
const RECEIPT: ReceiptView = {
  token: "tok-old",
  host: HOST,
  pid: 4242,
  processStart: "918273",
  bootId: BOOT,
};
/** The contender: another process on the same host and boot. */
const CONTENDER: ProcessIdentity = { pid: 5151, startTime: "999001", bootId: BOOT, host: HOST };
/** This very controller, as the receipt recorded it. */
const SAME_CONTROLLER: ProcessIdentity = {
  pid: RECEIPT.pid,
  startTime: RECEIPT.processStart,
  bootId: RECEIPT.bootId,
  host: RECEIPT.host,
};

const ALIVE: ProcessLiveness = { kind: "alive" };
const DEAD_NO_PID: ProcessLiveness = { kind: "dead", reason: "no_such_pid" };
const DEAD_REUSED: ProcessLiveness = { kind: "dead", reason: "pid_reused" };
const DEAD_REBOOTED: ProcessLiveness = { kind: "dead", reason: "rebooted" };
const DEAD_ZOMBIE: ProcessLiveness = { kind: "dead", reason: "zombie" };
const OTHER_HOST: ProcessLiveness = { kind: "unknown", reason: "other_host" };
const UNREADABLE: ProcessLiveness = { kind: "unknown", reason: "unreadable" };

function snap(overrides: Partial<TakeoverSnapshot> = {}): TakeoverSnapshot {
  return {
    receipt: { kind: "receipt", receipt: RECEIPT },
    self: CONTENDER,
    liveness: DEAD_NO_PID,
    barrier: false,
    joinedToken: null,
    ...overrides,
  };
}

const STOP = (
  reason: Extract<TakeoverDecision, { kind: "require_stop_verification" }>["reason"],
): TakeoverDecision => ({ kind: "require_stop_verification", reason });
const BUSY: TakeoverDecision = { kind: "busy", reason: "owner_alive" };
const TAKEOVER: TakeoverDecision = { kind: "takeover", reason: "controller_gone_with_barrier" };
const RESUME: TakeoverDecision = { kind: "resume_same_boot" };

afterEach(() => {
  vi.useRealTimers();
});

describe("decideTakeover", () => {
  it("R-OWN-7: without a receipt ownership is free (whatever the barrier or liveness)", () => {
    expect(decideTakeover(snap({ receipt: { kind: "none" }, liveness: null }))).toEqual({
      kind: "free",
    });
    expect(
      decideTakeover(
        snap({ receipt: { kind: "none" }, liveness: ALIVE, barrier: true, joinedToken: "tok-old" }),
      ),
    ).toEqual({ kind: "free" });
  });

  it.each<[string, TakeoverSnapshot, TakeoverDecision]>([
    ["R-OWN-8: a live controller on the same host is busy", snap({ liveness: ALIVE }), BUSY],
    [
      "R-OWN-8: a live controller is busy even when the success barrier exists",
      snap({ liveness: ALIVE, barrier: true }),
      BUSY,
    ],
    [
      "R-OWN-8: a live controller is busy for a contender holding a joined token of another run's receipt",
      snap({ liveness: ALIVE, joinedToken: "tok-other" }),
      BUSY,
    ],
    [
      "R-OWN-11: an exited controller on the same host with a durable barrier is taken over",
      snap({ liveness: DEAD_NO_PID, barrier: true }),
      TAKEOVER,
    ],
    [
      "R-OWN-11: an exited controller without a barrier requires stop verification, even on the same host (tar/git children may live on)",
      snap({ liveness: DEAD_NO_PID, barrier: false }),
      STOP("controller_exited_without_barrier"),
    ],
    [
      "R-OWN-11: a zombie controller (exited, not reaped) with a barrier is taken over",
      snap({ liveness: DEAD_ZOMBIE, barrier: true }),
      TAKEOVER,
    ],
    [
      "R-OWN-11: a zombie controller without a barrier requires stop verification",
      snap({ liveness: DEAD_ZOMBIE }),
      STOP("controller_exited_without_barrier"),
    ],
    [
      "R-OWN-11: a controller of an earlier boot with a barrier is taken over",
      snap({ liveness: DEAD_REBOOTED, barrier: true }),
      TAKEOVER,
    ],
    [
      "R-OWN-11: a controller of an earlier boot without a barrier requires stop verification",
      snap({ liveness: DEAD_REBOOTED }),
      STOP("controller_exited_without_barrier"),
    ],
    [
      "R-OWN-12: a reused PID (other start time) with a barrier is taken over",
      snap({ liveness: DEAD_REUSED, barrier: true }),
      TAKEOVER,
    ],
    [
      "R-OWN-12: a reused PID (other start time) without a barrier requires stop verification",
      snap({ liveness: DEAD_REUSED }),
      STOP("controller_exited_without_barrier"),
    ],
    [
      "R-ORP-4: foreign host requires stop verification",
      snap({ liveness: OTHER_HOST }),
      STOP("controller_on_other_host"),
    ],
    [
      "R-ORP-4: foreign host requires stop verification even with a barrier",
      snap({ liveness: OTHER_HOST, barrier: true }),
      STOP("controller_on_other_host"),
    ],
    [
      "R-ORP-4: an unobservable controller requires stop verification",
      snap({ liveness: UNREADABLE }),
      STOP("controller_unobservable"),
    ],
    [
      "R-ORP-4: an unobservable controller requires stop verification even with a barrier",
      snap({ liveness: UNREADABLE, barrier: true }),
      STOP("controller_unobservable"),
    ],
    [
      "R-ORP-4: a receipt that was never probed counts as unobservable",
      snap({ liveness: null, barrier: true }),
      STOP("controller_unobservable"),
    ],
    [
      "R-ORP-4: a malformed receipt requires stop verification",
      snap({ receipt: { kind: "malformed" }, liveness: null }),
      STOP("receipt_malformed"),
    ],
    [
      "R-ORP-4: a malformed receipt requires stop verification even with a barrier, a dead probe and a joined token",
      snap({
        receipt: { kind: "malformed" },
        liveness: DEAD_NO_PID,
        barrier: true,
        joinedToken: "tok-old",
        self: SAME_CONTROLLER,
      }),
      STOP("receipt_malformed"),
    ],
  ])("%s", (_name, snapshot, expected) => {
    expect(decideTakeover(snapshot)).toEqual(expected);
  });

  describe("R-OWN-10: same-boot resume needs the joined token AND the identical identity", () => {
    it("R-OWN-10: this exact controller boot that joined the token resumes", () => {
      expect(
        decideTakeover(
          snap({ self: SAME_CONTROLLER, joinedToken: RECEIPT.token, liveness: ALIVE }),
        ),
      ).toEqual(RESUME);
    });

    it("R-OWN-10: the resume does not depend on the barrier or the probe", () => {
      for (const liveness of [ALIVE, DEAD_NO_PID, OTHER_HOST, UNREADABLE, null]) {
        for (const barrier of [true, false]) {
          expect(
            decideTakeover(
              snap({ self: SAME_CONTROLLER, joinedToken: RECEIPT.token, liveness, barrier }),
            ),
          ).toEqual(RESUME);
        }
      }
    });

    it.each<[string, Partial<TakeoverSnapshot>, TakeoverDecision]>([
      [
        "R-OWN-10: an unknown token does not inherit it (no joined evidence)",
        { self: SAME_CONTROLLER, joinedToken: null, liveness: ALIVE },
        BUSY,
      ],
      [
        "R-OWN-10: an unknown token does not inherit it (joined another token)",
        { self: SAME_CONTROLLER, joinedToken: "tok-other", liveness: ALIVE },
        BUSY,
      ],
      [
        "R-OWN-10: a new boot does not inherit it (same pid and start time, other boot id)",
        {
          self: { ...SAME_CONTROLLER, bootId: "5e1d9a55-0000-4000-8000-000000000002" },
          joinedToken: RECEIPT.token,
          liveness: DEAD_REBOOTED,
        },
        STOP("controller_exited_without_barrier"),
      ],
      [
        "R-OWN-10: another process with the same pid (other start time) does not inherit it",
        {
          self: { ...SAME_CONTROLLER, startTime: "1000000" },
          joinedToken: RECEIPT.token,
          liveness: DEAD_REUSED,
        },
        STOP("controller_exited_without_barrier"),
      ],
      [
        "R-OWN-10: another pid of the same boot does not inherit it",
        {
          self: { ...SAME_CONTROLLER, pid: RECEIPT.pid + 1 },
          joinedToken: RECEIPT.token,
          liveness: DEAD_NO_PID,
        },
        STOP("controller_exited_without_barrier"),
      ],
      [
        "R-OWN-10: another host does not inherit it",
        {
          self: { ...SAME_CONTROLLER, host: "worker-b" },
          joinedToken: RECEIPT.token,
          liveness: OTHER_HOST,
        },
        STOP("controller_on_other_host"),
      ],
      [
        "R-OWN-10: a new boot with the joined token falls back to the barrier rule (barrier: takeover, never resume)",
        {
          self: { ...SAME_CONTROLLER, bootId: "5e1d9a55-0000-4000-8000-000000000002" },
          joinedToken: RECEIPT.token,
          liveness: DEAD_REBOOTED,
          barrier: true,
        },
        TAKEOVER,
      ],
    ])("%s", (_name, overrides, expected) => {
      expect(decideTakeover(snap(overrides))).toEqual(expected);
    });
  });

  describe("R-OWN-12: composed with the liveness probe of the recorded identity", () => {
    const recorded: ProcessIdentity = {
      pid: RECEIPT.pid,
      startTime: RECEIPT.processStart,
      bootId: RECEIPT.bootId,
      host: RECEIPT.host,
    };
    const seen = (
      stat: ProcessObservation["stat"],
      overrides: Partial<ProcessObservation> = {},
    ): ProcessObservation => ({ host: HOST, bootId: BOOT, stat, ...overrides });
    const stat = (startTime: string, state = "S"): ProcStat => ({
      state,
      processGroup: RECEIPT.pid,
      startTime,
    });

    it.each<[string, ProcessObservation, boolean, TakeoverDecision]>([
      [
        "R-OWN-12: a reused PID (other start time) with a barrier is taken over",
        seen(stat("1000000")),
        true,
        TAKEOVER,
      ],
      [
        "R-OWN-12: a reused PID (other start time) without a barrier requires stop verification",
        seen(stat("1000000")),
        false,
        STOP("controller_exited_without_barrier"),
      ],
      [
        "R-OWN-12: the same PID with the recorded start time is the controller: busy",
        seen(stat(RECEIPT.processStart)),
        true,
        BUSY,
      ],
      [
        "R-OWN-11: the same PID and start time as a zombie has exited: taken over with a barrier",
        seen(stat(RECEIPT.processStart, "Z")),
        true,
        TAKEOVER,
      ],
      ["R-OWN-11: a missing PID with a barrier is taken over", seen("missing"), true, TAKEOVER],
      [
        "R-OWN-11: a missing PID without a barrier requires stop verification",
        seen("missing"),
        false,
        STOP("controller_exited_without_barrier"),
      ],
      [
        "R-ORP-4: a recorded controller on another host requires stop verification",
        seen("missing", { host: "worker-b" }),
        true,
        STOP("controller_on_other_host"),
      ],
      [
        "R-ORP-4: an unreadable boot id requires stop verification",
        seen("missing", { bootId: null }),
        true,
        STOP("controller_unobservable"),
      ],
    ])("%s", (_name, observation, barrier, expected) => {
      const liveness = decideLiveness(recorded, observation);
      expect(decideTakeover(snap({ liveness, barrier }))).toEqual(expected);
    });
  });

  it("R-ORP-4: elapsed time is not an input: a receipt decades old without a barrier still requires stop verification", () => {
    const now = decideTakeover(snap({ liveness: DEAD_NO_PID }));
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2099-01-01T00:00:00Z"));
    expect(decideTakeover(snap({ liveness: DEAD_NO_PID }))).toEqual(now);
    expect(decideTakeover(snap({ liveness: OTHER_HOST }))).toEqual(
      STOP("controller_on_other_host"),
    );
    expect(decideTakeover(snap({ liveness: ALIVE }))).toEqual(BUSY);
    expect(now).toEqual(STOP("controller_exited_without_barrier"));
  });

  it("R-ORP-4: a snapshot carrying an age or a lost database connection decides exactly as one without", () => {
    const base = snap({ liveness: OTHER_HOST });
    const withNoise = {
      ...base,
      receiptAgeMs: 365 * 24 * 3600_000,
      lockConnectionLost: true,
    } as TakeoverSnapshot;
    expect(decideTakeover(withNoise)).toEqual(decideTakeover(base));
  });
});
