// The pure half of a database outage before the agent's start: which failures send the
// run back to the queue, how often, what happens to the attempt's leases, whose preparation the
// executor may settle (R-FO-4), and the words of the run event.
import { describe, expect, it } from "vitest";
import {
  decideAttemptLease,
  decideOwnPreparation,
  decideRequeueBudget,
  decideSetupFailure,
  MAX_DATABASE_REQUEUES,
  requeueMessage,
} from "../../src/dispatch/database-outage-policy";
import { newPreparationClaim } from "../../src/records/preparation-claim";

const self = { pid: 10, startTime: "100", bootId: "boot", host: "h" };
const now = new Date("2026-12-04T12:00:00Z");

describe("decideSetupFailure", () => {
  it("R-FO-1: a database failure before the agent's start requeues; after the exec call, or any other failure, fails as before", () => {
    expect(decideSetupFailure({ databaseFailure: true, agentLaunched: false })).toEqual({ kind: "requeue" });
    expect(decideSetupFailure({ databaseFailure: true, agentLaunched: true })).toEqual({ kind: "fail", reason: "agent_launched" });
    expect(decideSetupFailure({ databaseFailure: false, agentLaunched: false })).toEqual({ kind: "fail", reason: "not_database" });
  });

  it("R-FO-1: the run is requeued for the database at most three times", () => {
    expect(MAX_DATABASE_REQUEUES).toBe(3);
    expect(decideRequeueBudget(0)).toEqual({ kind: "requeue" });
    expect(decideRequeueBudget(2)).toEqual({ kind: "requeue" });
    expect(decideRequeueBudget(3)).toEqual({ kind: "spent", requeues: 3 });
  });

  it("says which step the database failed", () => {
    expect(requeueMessage("acquisition")).toBe("The database was unavailable while the sandbox was being acquired; the run went back to the queue.");
    expect(requeueMessage("agent_start")).toBe("The database was unavailable before the agent could be started; the run went back to the queue.");
  });
});

describe("decideAttemptLease", () => {
  it("R-FO-1: a recorded allocation is released by policy, an unrecorded one gets its destroy intent, anything not active is left", () => {
    expect(decideAttemptLease({ status: "active", providerLeaseId: "p" })).toEqual({ kind: "release_by_policy" });
    expect(decideAttemptLease({ status: "active", providerLeaseId: null })).toEqual({ kind: "destroy_intent" });
    for (const status of ["pending_cleanup", "released", "destroyed", "failed"]) expect(decideAttemptLease({ status, providerLeaseId: "p" })).toEqual({ kind: "leave" });
  });
});

describe("decideOwnPreparation", () => {
  const mine = newPreparationClaim(self, new Date(now.getTime() - 1_000), 60_000);

  it("R-FO-4: with its token, exactly the live claim settles", () => {
    expect(decideOwnPreparation({ status: "running", claim: mine, token: mine.token, self, now })).toEqual({ kind: "live" });
    expect(decideOwnPreparation({ status: "running", claim: mine, token: "0b9e4c4e-4a2b-4f7e-9a55-3f0f8d1f2a10", self, now })).toEqual({ kind: "refused", reason: "claim_other_owner" });
    expect(decideOwnPreparation({ status: "running", claim: mine, token: mine.token, self, now: new Date(now.getTime() + 120_000) })).toEqual({ kind: "refused", reason: "claim_stale" });
  });

  it("R-FO-4: without a token, only a live claim of this very process settles", () => {
    expect(decideOwnPreparation({ status: "running", claim: mine, token: null, self, now })).toEqual({ kind: "live" });
    expect(decideOwnPreparation({ status: "running", claim: mine, token: null, self: { ...self, startTime: "101" }, now })).toEqual({ kind: "refused", reason: "claim_other_owner" });
    expect(decideOwnPreparation({ status: "running", claim: newPreparationClaim(null, now), token: null, self, now })).toEqual({ kind: "refused", reason: "claim_missing" });
    expect(decideOwnPreparation({ status: "running", claim: null, token: null, self, now })).toEqual({ kind: "refused", reason: "claim_missing" });
    expect(decideOwnPreparation({ status: "running", claim: mine, token: null, self, now: new Date(now.getTime() + 120_000) })).toEqual({ kind: "refused", reason: "claim_stale" });
    expect(decideOwnPreparation({ status: "failed", claim: mine, token: null, self, now })).toEqual({ kind: "refused", reason: "preparation_settled" });
  });
});
