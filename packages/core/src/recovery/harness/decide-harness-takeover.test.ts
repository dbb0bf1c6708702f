// R-RW-3, R-RW-4: admission of an automatic takeover, table-driven: admitted only for the exact
// owner and deployment the receipt attests, with every check of the operator path.
import { describe, expect, it } from "vitest";
import type { BindingSnapshot } from "../../finalization/binding";
import type { RailwayIdentity } from "../../platforms/platform-identity";
import { OWNER_UNVERIFIED_CAUSE } from "../../records/causes";
import { decideHarnessTakeover, type HarnessTakeoverSnapshot } from "./decide-harness-takeover";

const DEPLOYMENT: RailwayIdentity = { kind: "railway", projectId: "p", environmentId: "e", serviceId: "s", deploymentId: "d" };
const binding: BindingSnapshot = {
  run: { id: "run-1", companyId: "c", issueId: "i", agentId: "a", status: "running", runtimeMode: "native" },
  issue: { id: "i", companyId: "c", status: "in_progress", assigneeAgentId: "a", executionRunId: "run-1", checkoutRunId: "run-1" },
  coordinator: { phase: "workspace_finalizing", resultId: "r" },
  acceptedResultId: "r",
  otherActiveRunIds: [],
};

function snapshot(over: { receipt?: HarnessTakeoverSnapshot["attestation"]["receipt"]; platform?: unknown; lock?: boolean; binding?: Partial<BindingSnapshot>; attestedToken?: string | null } = {}): HarnessTakeoverSnapshot {
  return {
    attestation: {
      request: { runId: "run-1", ownerToken: "tok" },
      action: { cause: OWNER_UNVERIFIED_CAUSE, status: "active", runId: "run-1", attestationToken: "tok", receiptSha256: null, attestedToken: over.attestedToken ?? null },
      lockAcquired: over.lock ?? true,
      receipt: over.receipt ?? { kind: "receipt", token: "tok" },
      liveness: null,
      binding: { ...binding, ...over.binding },
    },
    receiptPlatform: ("platform" in over ? over.platform : DEPLOYMENT) as HarnessTakeoverSnapshot["receiptPlatform"],
    proven: DEPLOYMENT,
  };
}

describe("decideHarnessTakeover", () => {
  it("R-RW-3 admits the exact owner whose deployment the receipt proves removed", () => {
    expect(decideHarnessTakeover(snapshot())).toEqual({ kind: "admit" });
  });

  it.each([
    ["a newer owner's token", { receipt: { kind: "receipt" as const, token: "tok-newer" } }, "owner_changed"],
    ["the receipt released meanwhile", { receipt: { kind: "none" as const } }, "owner_changed"],
    ["the same token with another deployment", { platform: { ...DEPLOYMENT, deploymentId: "d2" } }, "owner_changed"],
    ["the same token without a platform", { platform: undefined }, "owner_changed"],
    ["a copyback holding the lock", { lock: false }, "copyback_lock_active"],
    ["a reassigned task", { binding: { issue: { ...binding.issue!, assigneeAgentId: "other" } } }, "task_reassigned"],
    ["a closed task", { binding: { issue: { ...binding.issue!, status: "done" as const } } }, "task_closed"],
    ["a newer queued run", { binding: { otherActiveRunIds: ["run-2"] } }, "newer_run"],
    ["another checkout", { binding: { issue: { ...binding.issue!, checkoutRunId: "run-2" } } }, "checkout_changed"],
    ["an unbound result", { binding: { acceptedResultId: null } }, "result_unbound"],
  ])("R-RW-3 R-RW-4 refuses %s", (_name, over, code) => {
    expect(decideHarnessTakeover(snapshot(over))).toMatchObject({ kind: "reject", code });
  });

  it("R-RW-3 an operator's attestation of the same owner meanwhile writes nothing", () => {
    expect(decideHarnessTakeover(snapshot({ attestedToken: "tok" }))).toEqual({ kind: "already_attested" });
  });

  it("R-RW-3 a second pass over a hold already taken over writes nothing, though the first pass's finalization now carries its own receipt (torture seed 7)", () => {
    const newer = { kind: "worker_cgroup", path: "copyback-worker-b" };
    expect(decideHarnessTakeover(snapshot({ attestedToken: "tok", receipt: { kind: "receipt", token: "tok-of-the-reconciler" }, platform: newer }))).toEqual({ kind: "already_attested" });
    expect(decideHarnessTakeover(snapshot({ attestedToken: "tok", receipt: { kind: "none" } }))).toEqual({ kind: "already_attested" });
  });
});
