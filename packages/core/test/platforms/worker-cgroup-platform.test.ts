// Issue 22 part 5: the worker-cgroup platform's identity and setting. Its identity is what the
// worker read back after joining its group; a receipt naming a half or odd one reads as
// malformed, so no harness is ever asked about it; another platform's identity never matches it.
import { describe, expect, it } from "vitest";
import { detectControllerPlatform } from "../../src/platforms/controller-platform";
import { identityInWords, platformProofOf, recordedPlatform, sameIdentity, workerCgroupIdentity, type WorkerCgroupIdentity } from "../../src/platforms/platform-identity";
import { workerCgroupDetection, workerCgroupSetting } from "../../src/platforms/worker-cgroup-platform";

const identity: WorkerCgroupIdentity = { kind: "worker_cgroup", version: 1, path: "/process_api/copyback-worker-0123456789abcdef", bootId: "0e5b2f4c-1a2b-4c3d-8e9f-0123456789ab" };

describe("the worker-cgroup identity", () => {
  it("R-RW-1 a joined worker cgroup is a platform identity the harness path takes", () => {
    expect(workerCgroupDetection(identity)).toMatchObject({ kind: "detected", identity });
    expect(platformProofOf(recordedPlatform.parse(identity))).toEqual({ kind: "harness", identity });
    expect(identityInWords(identity)).toBe("worker cgroup /process_api/copyback-worker-0123456789abcdef (cgroup v1) held no process (nor any group below it) when the harness read it");
  });

  it("R-RW-6 a half or odd worker-cgroup record is malformed, never another platform's and never unsupported", () => {
    const bad: unknown[] = [
      { kind: "worker_cgroup", version: 1, path: identity.path },
      { ...identity, version: 3 },
      { ...identity, path: "/process_api/not-a-worker-group" },
      { ...identity, path: "/a/../copyback-worker-0123456789abcdef" },
      { ...identity, path: "copyback-worker-0123456789abcdef" },
      { ...identity, bootId: "boot" },
      { ...identity, extra: 1 },
    ];
    for (const record of bad) expect(recordedPlatform.safeParse(record).success, JSON.stringify(record)).toBe(false);
    expect(workerCgroupIdentity.safeParse({ ...identity, path: "/copyback-worker-0123456789abcdef" }).success).toBe(true);
  });

  it("R-RW-3 sameIdentity compares every field, and never matches across platforms", () => {
    expect(sameIdentity(identity, { ...identity })).toBe(true);
    expect(sameIdentity(identity, { ...identity, version: 2 })).toBe(false);
    expect(sameIdentity(identity, { ...identity, bootId: "0e5b2f4c-1a2b-4c3d-8e9f-0123456789ac" })).toBe(false);
    expect(sameIdentity(identity, { ...identity, path: "/process_api/copyback-worker-0123456789abcdee" })).toBe(false);
    expect(sameIdentity(identity, { kind: "railway", projectId: "p", environmentId: "e", serviceId: "s", deploymentId: "d" })).toBe(false);
  });

  it("the setting is off by default; only on or off are accepted, and a bad value refuses the start", () => {
    expect(workerCgroupSetting({})).toBe("off");
    expect(workerCgroupSetting({ COPYBACK_WORKER_CGROUP: "on" })).toBe("on");
    expect(workerCgroupSetting({ COPYBACK_WORKER_CGROUP: "yes" })).toMatchObject({ invalid: expect.stringContaining("COPYBACK_WORKER_CGROUP") });
    expect(detectControllerPlatform({ COPYBACK_WORKER_CGROUP: "1" })).toMatchObject({ kind: "invalid", platform: "worker_cgroup" });
    expect(detectControllerPlatform({ COPYBACK_WORKER_CGROUP: "on" })).toEqual({ kind: "none" });
  });
});
