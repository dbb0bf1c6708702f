import { describe, expect, it } from "vitest";
import { canTransition, forbiddenTransitions, isTerminal, LEASE_STATUSES, type LeaseStatus } from "../../src/leases/index";

const ALLOWED: Array<[LeaseStatus, LeaseStatus]> = [
  ["active", "released"],
  ["active", "pending_cleanup"],
  ["active", "destroyed"],
  ["active", "failed"],
  ["pending_cleanup", "released"],
  ["pending_cleanup", "destroyed"],
  ["pending_cleanup", "failed"],
  ["released", "active"],
  ["released", "destroyed"],
];

describe("lease status machine", () => {
  it("allows exactly the documented transitions", () => {
    for (const from of LEASE_STATUSES) {
      for (const to of LEASE_STATUSES) {
        const expected = ALLOWED.some(([a, b]) => a === from && b === to);
        expect(canTransition(from, to), `${from} -> ${to}`).toBe(expected);
      }
    }
  });

  it("R-SO-1 never lets a released lease go back to pending or failed without being reused first", () => {
    expect(canTransition("released", "pending_cleanup")).toBe(false);
    expect(canTransition("released", "failed")).toBe(false);
  });

  it("destroyed and failed are terminal", () => {
    expect(LEASE_STATUSES.filter(isTerminal).sort()).toEqual(["destroyed", "failed"]);
  });

  it("names the statuses of a request that may not move to the target", () => {
    expect(forbiddenTransitions(["active", "released", "destroyed"], "pending_cleanup")).toEqual(["released", "destroyed"]);
    expect(forbiddenTransitions(["active", "pending_cleanup"], "released")).toEqual([]);
  });
});
