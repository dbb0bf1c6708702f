import { describe, expect, it } from "vitest";
import { decideLiveness } from "./liveness-policy";
import { parseProcStat } from "./proc-stat";
import type { ProcessIdentity } from "./process-identity";

const line = (comm: string, state = "S", start = "73295") =>
  `4242 (${comm}) ${state} 1 4242 4242 0 -1 4194624 53 0 0 0 0 0 0 0 20 0 1 0 ${start} 3158016 1 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n`;

describe("parseProcStat", () => {
  it("R-OWN-12 reads state, group and start time after the last parenthesis", () => {
    expect(parseProcStat(line("sleep"))).toEqual({ state: "S", processGroup: 4242, startTime: "73295" });
  });

  it("R-OWN-12 is not fooled by a command name with spaces and parentheses", () => {
    expect(parseProcStat(line("a) Z 1 2 3 (b", "R", "99"))).toEqual({ state: "R", processGroup: 4242, startTime: "99" });
  });

  it("keeps start times beyond 2^53 exact", () => {
    expect(parseProcStat(line("x", "S", "18446744073709551615"))?.startTime).toBe("18446744073709551615");
  });

  it("refuses malformed lines", () => {
    expect(parseProcStat("")).toBeNull();
    expect(parseProcStat("4242 (x) S 1 2")).toBeNull();
    expect(parseProcStat("4242 x S 1 2 3")).toBeNull();
  });
});

describe("decideLiveness", () => {
  const recorded: ProcessIdentity = { pid: 10, startTime: "500", bootId: "boot-a", host: "h1" };
  const stat = (state: string, startTime: string) => ({ state, processGroup: 10, startTime });

  it("R-OWN-12 alive only with the same host, boot and start time", () => {
    expect(decideLiveness(recorded, { host: "h1", bootId: "boot-a", stat: stat("S", "500") })).toEqual({ kind: "alive" });
  });

  it("R-OWN-12 a live PID with another start time is a reused PID", () => {
    expect(decideLiveness(recorded, { host: "h1", bootId: "boot-a", stat: stat("S", "501") })).toEqual({ kind: "dead", reason: "pid_reused" });
  });

  it("R-OWN-12 another boot id means the process died with the old boot", () => {
    expect(decideLiveness(recorded, { host: "h1", bootId: "boot-b", stat: stat("S", "500") })).toEqual({ kind: "dead", reason: "rebooted" });
  });

  it("R-OWN-12 another host cannot be judged from here", () => {
    expect(decideLiveness(recorded, { host: "h2", bootId: "boot-a", stat: "missing" })).toEqual({ kind: "unknown", reason: "other_host" });
  });

  it("no such PID, a zombie and unreadable /proc", () => {
    expect(decideLiveness(recorded, { host: "h1", bootId: "boot-a", stat: "missing" })).toEqual({ kind: "dead", reason: "no_such_pid" });
    expect(decideLiveness(recorded, { host: "h1", bootId: "boot-a", stat: stat("Z", "500") })).toEqual({ kind: "dead", reason: "zombie" });
    expect(decideLiveness(recorded, { host: "h1", bootId: "boot-a", stat: "unreadable" })).toEqual({ kind: "unknown", reason: "unreadable" });
    expect(decideLiveness(recorded, { host: "h1", bootId: null, stat: stat("S", "500") })).toEqual({ kind: "unknown", reason: "unreadable" });
  });
});
