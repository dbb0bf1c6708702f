import { describe, expect, it } from "vitest";
import { decideLeaseRelease } from "../../src/leases/index";

describe("decideLeaseRelease", () => {
  it.each([
    ["ephemeral", "committed", "destroy"],
    ["ephemeral", "failed", "stop_and_retain"],
    ["reuse_by_environment", "committed", "stop_and_retain"],
    ["reuse_by_environment", "failed", "stop_and_retain"],
    ["retain_on_failure", "committed", "destroy"],
    ["retain_on_failure", "failed", "stop_and_retain"],
    ["ephemeral", "agent_not_started", "destroy"],
    ["reuse_by_environment", "agent_not_started", "stop_and_retain"],
    ["retain_on_failure", "agent_not_started", "destroy"],
  ] as const)("%s + %s -> %s", (policy, outcome, kind) => {
    expect(decideLeaseRelease(policy, outcome)).toEqual({ kind });
  });

  it("R-EX-4 keeps the files of every failed run, ephemeral included (never destroy on failure)", () => {
    for (const policy of ["ephemeral", "reuse_by_environment", "retain_on_failure"] as const) {
      expect(decideLeaseRelease(policy, "failed").kind).toBe("stop_and_retain");
    }
  });

  it("R-FO-1 a run refused before its agent was started keeps nothing of anyone's: released as after a commit", () => {
    for (const policy of ["ephemeral", "reuse_by_environment", "retain_on_failure"] as const) {
      expect(decideLeaseRelease(policy, "agent_not_started")).toEqual(decideLeaseRelease(policy, "committed"));
    }
  });
});
