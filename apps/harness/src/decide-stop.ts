// R-RW-2: whether the harness signs a stop receipt, as a pure function of the request, the stack's
// own resources (its configuration, never the request's word) and what Railway said. It signs only
// for the exact deployment, inside the stack's project, environment and service, REMOVED with
// deploymentStopped true; everything else is a fixed refusal code.
import type { HarnessRefusalCode, WorkerStopRequest } from "@copyback/core/platforms";
import type { RailwayStack, StackResources } from "./env";
import type { DeploymentRead } from "./railway-client";

export type StopDecision = { kind: "sign" } | { kind: "refuse"; code: HarnessRefusalCode; message: string; status?: string };

const refuse = (code: HarnessRefusalCode, message: string, status?: string): StopDecision => ({ kind: "refuse", code, message, ...(status ? { status } : {}) });

/** Before Railway is asked: the request must name a deployment inside the stack's own resources. */
export function decideBeforeRead(request: WorkerStopRequest, stack: StackResources | undefined): StopDecision | null {
  if (!stack) return refuse("unknown_stack", "The harness serves no such stack.");
  const d = request.deployment;
  // A stack proves one platform's stops: an identity of another platform is not this stack's.
  if (d.kind !== "railway" || "kind" in stack) return refuse("deployment_not_owned", "The identity named is not of this stack's platform.");
  if (d.projectId !== stack.projectId || d.environmentId !== stack.environmentId || d.serviceId !== stack.serviceId) {
    return refuse("deployment_not_owned", "The deployment named is not in this stack's project, environment and service.");
  }
  return null;
}

/** The same for a worker-cgroup identity: only a worker-cgroup stack can speak for it. */
export function decidePlatformMatch(request: WorkerStopRequest, stack: StackResources | undefined): StopDecision | null {
  if (!stack) return refuse("unknown_stack", "The harness serves no such stack.");
  if ((request.deployment.kind === "worker_cgroup") !== ("kind" in stack)) return refuse("deployment_not_owned", "The identity named is not of this stack's platform.");
  return null;
}

export function decideStop(request: WorkerStopRequest, stack: RailwayStack, read: DeploymentRead): StopDecision {
  switch (read.kind) {
    case "unavailable":
      return refuse("evidence_unavailable", read.message);
    case "truncated":
      return refuse("evidence_truncated", read.message);
    case "missing":
      // A deployment Railway does not know proves nothing about processes: no receipt.
      return refuse("deployment_missing", read.message);
    case "found":
      break;
  }
  const found = read.deployment;
  if (request.deployment.kind !== "railway") return refuse("deployment_not_owned", "The identity named is not of this stack's platform.");
  // What Railway says about the deployment, not what the request said, decides ownership.
  if (found.id !== request.deployment.deploymentId) return refuse("evidence_truncated", "Railway answered about another deployment.");
  if (found.projectId !== stack.projectId || found.environmentId !== stack.environmentId || found.serviceId !== stack.serviceId) {
    return refuse("deployment_not_owned", "Railway places this deployment outside the stack's project, environment and service.", found.status);
  }
  if (found.status !== "REMOVED" || found.deploymentStopped !== true) {
    return refuse("deployment_live", `The deployment is ${found.status}${found.deploymentStopped ? "" : " and not stopped"}; its processes may still run.`, found.status);
  }
  return { kind: "sign" };
}
