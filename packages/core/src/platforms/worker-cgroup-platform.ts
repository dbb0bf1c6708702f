// Issue 22 part 5: the worker-cgroup platform, the second ControllerPlatform. Its identity is not
// in the environment: the worker makes and joins its own cgroup at start when the setting
// COPYBACK_WORKER_CGROUP=on asks for it (providers/local/worker-cgroup.ts), so detect() only
// says whether the setting is on; the worker then calls workerCgroupDetection with what it joined.
// Off by default: R-OWN-11 asks for an operator on the same host, and this proof only says the
// group is empty (the README says what that does and does not prove).
import type { ControllerPlatform, PlatformDetection } from "./platform-contract";
import { WORKER_CGROUP_PLATFORM, type WorkerCgroupIdentity } from "./platform-identity";

export const WORKER_CGROUP_VARIABLE = "COPYBACK_WORKER_CGROUP";
export const WORKER_CGROUP_HARNESS = "copyback-harness (worker cgroup, same host)";

export type WorkerCgroupSetting = "on" | "off";

/** The setting's value: "on" or unset/"off"; anything else is a configuration error. */
export function workerCgroupSetting(env: Readonly<Record<string, unknown>>): WorkerCgroupSetting | { invalid: string } {
  const value = env[WORKER_CGROUP_VARIABLE];
  if (value === undefined || value === null || value === "" || value === "off") return "off";
  if (value === "on") return "on";
  return { invalid: `${WORKER_CGROUP_VARIABLE} must be "on" or "off", not ${JSON.stringify(value)}` };
}

export function workerCgroupDetection(identity: WorkerCgroupIdentity): PlatformDetection {
  return { kind: "detected", identity, harness: WORKER_CGROUP_HARNESS };
}

/**
 * Not in CONTROLLER_PLATFORMS' environment scan: its detect() cannot name the group before the
 * worker joined it. It reports only a bad setting, so detectControllerPlatform refuses that.
 */
export const workerCgroupPlatform: ControllerPlatform = {
  name: WORKER_CGROUP_PLATFORM,
  harness: WORKER_CGROUP_HARNESS,
  detect(env) {
    const setting = workerCgroupSetting(env);
    return typeof setting === "object" ? { kind: "invalid", platform: WORKER_CGROUP_PLATFORM, message: setting.invalid } : { kind: "none" };
  },
};
