// R-RW-1, R-RW-6: a controller's platform comes from its own environment, all of Railway's
// variables or none; a partial or malformed set is a configuration error, never a guess.
import { describe, expect, it } from "vitest";
import { detectControllerPlatform } from "../../src/platforms/controller-platform";
import { platformProofOf } from "../../src/platforms/platform-identity";

const railwayEnv = {
  RAILWAY_PROJECT_ID: "p-1",
  RAILWAY_ENVIRONMENT_ID: "e-1",
  RAILWAY_SERVICE_ID: "s-1",
  RAILWAY_DEPLOYMENT_ID: "d-1",
};

describe("detectControllerPlatform", () => {
  it("R-RW-1 detects a Railway deployment from its four variables", () => {
    expect(detectControllerPlatform(railwayEnv)).toEqual({
      kind: "detected",
      harness: expect.any(String),
      identity: { kind: "railway", projectId: "p-1", environmentId: "e-1", serviceId: "s-1", deploymentId: "d-1" },
    });
  });

  it("R-RW-6 detects no platform without them (a hostname or PID is never read)", () => {
    expect(detectControllerPlatform({ HOSTNAME: "railway-abc", PATH: "/bin" })).toEqual({ kind: "none" });
    expect(detectControllerPlatform({ RAILWAY_PROJECT_ID: "" })).toEqual({ kind: "none" });
  });

  it("R-RW-1 refuses an incomplete or malformed set with the names it misses", () => {
    const { RAILWAY_DEPLOYMENT_ID: _d, ...partial } = railwayEnv;
    expect(detectControllerPlatform(partial)).toMatchObject({ kind: "invalid", message: expect.stringContaining("RAILWAY_DEPLOYMENT_ID") });
    expect(detectControllerPlatform({ ...railwayEnv, RAILWAY_DEPLOYMENT_ID: "d 1; drop" })).toMatchObject({ kind: "invalid", platform: "railway" });
  });
});

describe("platformProofOf", () => {
  it("R-RW-6 a receipt without identity, or with an unsupported platform, needs an operator; a Railway one asks the harness", () => {
    expect(platformProofOf(undefined)).toEqual({ kind: "operator", reason: "no_platform_identity" });
    expect(platformProofOf({ kind: "kubernetes", pod: "x" })).toEqual({ kind: "operator", reason: "unsupported_platform" });
    const identity = { kind: "railway" as const, projectId: "p", environmentId: "e", serviceId: "s", deploymentId: "d" };
    expect(platformProofOf(identity)).toEqual({ kind: "harness", identity });
  });
});
