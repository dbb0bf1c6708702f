// The controller platform this worker's owner receipts name (R-RW-1; issue 22 part 5): the
// worker cgroup it joins now when COPYBACK_WORKER_CGROUP=on (before any child starts, so every
// child is inside it), else Railway's deployment from its variables, else none.
import { joinWorkerCgroup } from "@copyback/core/providers";
import type { ControllerPlatformIdentity } from "@copyback/core/platforms";
import { controllerPlatformOf, type WorkerEnv } from "./env";

export async function resolveControllerPlatform(env: WorkerEnv): Promise<ControllerPlatformIdentity | undefined> {
  if (env.COPYBACK_WORKER_CGROUP === "on") return (await joinWorkerCgroup()).identity;
  return controllerPlatformOf(env);
}
