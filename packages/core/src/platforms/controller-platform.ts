// R-RW-1: the platform a controller process runs on, detected from its own environment (parsed by
// the app's env.ts, which is the only reader of process.env). A platform names the harness that
// can prove a stopped controller's deployment is gone (R-RW-2). A process on no recognised
// platform detects none and writes receipts exactly as before (R-RW-6).
//
// To add a platform: its identity schema beside railwayIdentity (platform-identity.ts), an
// implementation of ControllerPlatform like railway-platform.ts, its entry in CONTROLLER_PLATFORMS,
// and a harness that answers POST /v1/tenant/workspace-worker-stop for it.
import type { ControllerPlatform, PlatformDetection } from "./platform-contract";
import { railwayPlatform } from "./railway-platform";
import { workerCgroupPlatform } from "./worker-cgroup-platform";

export type { ControllerPlatform, PlatformDetection } from "./platform-contract";

// The worker-cgroup platform's detect() only refuses a bad setting (its identity exists once the
// worker joined its group: the worker asks for it when the setting is on).
export const CONTROLLER_PLATFORMS: readonly ControllerPlatform[] = [railwayPlatform, workerCgroupPlatform];

/** The first platform that recognises the environment; two at once is a configuration error. */
export function detectControllerPlatform(
  env: Readonly<Record<string, unknown>>,
  platforms: readonly ControllerPlatform[] = CONTROLLER_PLATFORMS,
): PlatformDetection {
  const found = platforms.map((p) => p.detect(env)).filter((d) => d.kind !== "none");
  const invalid = found.find((d) => d.kind === "invalid");
  if (invalid) return invalid;
  if (found.length > 1) return { kind: "invalid", platform: "several", message: "the environment names more than one controller platform" };
  return found[0] ?? { kind: "none" };
}
