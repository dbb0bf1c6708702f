// R-OWN-12, R-ORP-4: whether a recorded controller is still the same process, decided from a
// recorded identity and one observation of this host. Every outcome with its exact reason.
import { describe, expect, it } from "vitest";
import { decideLiveness, type ProcessObservation } from "./liveness-policy";
import type { ProcStat } from "./proc-stat";
import type { ProcessIdentity, ProcessLiveness } from "./process-identity";

const BOOT = "6e1f0c52-33c4-4b8e-8d0e-2f1a9b7c5d40";
const RECORDED: ProcessIdentity = {
  pid: 4242,
  startTime: "918273",
  bootId: BOOT,
  host: "worker-a",
};

const stat = (state: string, startTime = RECORDED.startTime): ProcStat => ({
  state,
  processGroup: RECORDED.pid,
  startTime,
});
const seen = (
  s: ProcessObservation["stat"],
  patch: Partial<ProcessObservation> = {},
): ProcessObservation => ({
  host: RECORDED.host,
  bootId: BOOT,
  stat: s,
  ...patch,
});

describe("decideLiveness", () => {
  it.each<[string, ProcessObservation, ProcessLiveness]>([
    [
      "R-OWN-12: the recorded PID with the recorded start time, running, is alive",
      seen(stat("R")),
      { kind: "alive" },
    ],
    ["R-OWN-12: a sleeping process is alive", seen(stat("S")), { kind: "alive" }],
    [
      "R-OWN-12: a process in uninterruptible sleep (D) is alive",
      seen(stat("D")),
      { kind: "alive" },
    ],
    [
      "R-OWN-12: a stopped process (T, e.g. SIGSTOP) is alive: it may continue",
      seen(stat("T")),
      { kind: "alive" },
    ],
    [
      "R-OWN-12: an idle kernel thread state (I) is not an exit",
      seen(stat("I")),
      { kind: "alive" },
    ],
    ["R-OWN-12: a zombie (Z) has exited", seen(stat("Z")), { kind: "dead", reason: "zombie" }],
    ["R-OWN-12: a dead task (X) has exited", seen(stat("X")), { kind: "dead", reason: "zombie" }],
    [
      "R-OWN-12: the same PID with another start time is another process",
      seen(stat("R", "918274")),
      { kind: "dead", reason: "pid_reused" },
    ],
    [
      "R-OWN-12: a reused PID that is a zombie is reported as reused (start time first)",
      seen(stat("Z", "1")),
      { kind: "dead", reason: "pid_reused" },
    ],
    ["R-OWN-12: no such PID", seen("missing"), { kind: "dead", reason: "no_such_pid" }],
    [
      "R-ORP-4: a stat that cannot be read is unknown, never dead",
      seen("unreadable"),
      { kind: "unknown", reason: "unreadable" },
    ],
    [
      "R-OWN-12: another boot id means every process of the recorded boot is gone",
      seen(stat("R"), { bootId: "other-boot" }),
      { kind: "dead", reason: "rebooted" },
    ],
    [
      "R-OWN-12: after a reboot even an unreadable stat is dead",
      seen("unreadable", { bootId: "other-boot" }),
      { kind: "dead", reason: "rebooted" },
    ],
    [
      "R-ORP-4: an unreadable boot id is unknown, whatever the stat shows",
      seen("missing", { bootId: null }),
      { kind: "unknown", reason: "unreadable" },
    ],
    [
      "R-ORP-4: an unreadable boot id with a matching live stat is still unknown",
      seen(stat("R"), { bootId: null }),
      { kind: "unknown", reason: "unreadable" },
    ],
    [
      "R-ORP-4: a recorded process of another host cannot be probed from here",
      seen(stat("R"), { host: "worker-b" }),
      { kind: "unknown", reason: "other_host" },
    ],
    [
      "R-ORP-4: another host wins over a missing PID and a foreign boot",
      seen("missing", { host: "worker-b", bootId: "other-boot" }),
      { kind: "unknown", reason: "other_host" },
    ],
  ])("%s", (_name, observation, expected) => {
    expect(decideLiveness(RECORDED, observation)).toEqual(expected);
  });

  it("R-OWN-12: start times are compared as exact strings (beyond 2^53 too)", () => {
    const big: ProcessIdentity = { ...RECORDED, startTime: "9007199254740993" };
    expect(decideLiveness(big, seen(stat("S", "9007199254740993")))).toEqual({ kind: "alive" });
    expect(decideLiveness(big, seen(stat("S", "9007199254740992")))).toEqual({
      kind: "dead",
      reason: "pid_reused",
    });
  });
});
