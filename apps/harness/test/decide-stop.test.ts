// R-RW-2: the harness signs only for the exact deployment of the stack's own service that Railway
// reports REMOVED with deploymentStopped true; every other answer is a fixed refusal.
import { describe, expect, it } from "vitest";
import type { RailwayIdentity, WorkerStopRequest } from "@copyback/core/platforms";
import { decideBeforeRead, decideStop } from "../src/decide-stop";
import type { DeploymentRead, RailwayDeployment } from "../src/railway-client";

const stack = { projectId: "proj", environmentId: "env", serviceId: "svc" };
const request: WorkerStopRequest & { deployment: RailwayIdentity } = {
  stack: "stack-a",
  runId: "run-1",
  ownerToken: "owner-token-0123456789",
  deployment: { kind: "railway", projectId: "proj", environmentId: "env", serviceId: "svc", deploymentId: "dep" },
};
const deployment = (over: Partial<RailwayDeployment> = {}): DeploymentRead => ({
  kind: "found",
  deployment: { id: "dep", status: "REMOVED", deploymentStopped: true, projectId: "proj", environmentId: "env", serviceId: "svc", ...over },
});

describe("decideStop", () => {
  it("R-RW-2 signs for REMOVED with deploymentStopped true, inside the stack's resources", () => {
    expect(decideBeforeRead(request, stack)).toBeNull();
    expect(decideStop(request, stack, deployment())).toEqual({ kind: "sign" });
  });

  it.each([
    ["SUCCESS", true],
    ["REMOVING", true],
    ["CRASHED", false],
    ["SLEEPING", true],
    ["REMOVED", false],
    ["A_STATUS_RAILWAY_ADDS_LATER", true],
  ] as const)("R-RW-2 refuses %s with deploymentStopped %s as deployment_live", (status, deploymentStopped) => {
    expect(decideStop(request, stack, deployment({ status, deploymentStopped }))).toMatchObject({ kind: "refuse", code: "deployment_live", status });
  });

  it("R-RW-2 never trusts the request for ownership: Railway's own project, environment or service outside the stack refuses", () => {
    for (const over of [{ projectId: "other" }, { environmentId: "other" }, { serviceId: "other" }]) {
      expect(decideStop(request, stack, deployment(over))).toMatchObject({ kind: "refuse", code: "deployment_not_owned" });
    }
    expect(decideStop(request, stack, deployment({ id: "another-deployment" }))).toMatchObject({ kind: "refuse", code: "evidence_truncated" });
  });

  it("R-RW-2 refuses a request naming resources outside the stack, or an unknown stack, before Railway is asked", () => {
    expect(decideBeforeRead({ ...request, deployment: { ...request.deployment, serviceId: "svc-of-another-stack" } }, stack)).toMatchObject({ code: "deployment_not_owned" });
    expect(decideBeforeRead(request, undefined)).toMatchObject({ code: "unknown_stack" });
  });

  it("R-RW-2 missing, truncated or unavailable evidence is no receipt, each with its code", () => {
    expect(decideStop(request, stack, { kind: "missing", message: "Deployment not found" })).toMatchObject({ code: "deployment_missing" });
    expect(decideStop(request, stack, { kind: "truncated", message: "cut" })).toMatchObject({ code: "evidence_truncated" });
    expect(decideStop(request, stack, { kind: "unavailable", message: "timeout" })).toMatchObject({ code: "evidence_unavailable" });
  });
});
