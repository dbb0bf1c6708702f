// R-RW-1: a controller deployed on Railway. Railway gives every deployment these variables
// (docs.railway.com, "Railway-provided variables"); together they name the exact deployment the
// harness asks Railway about.
import { z } from "zod";
import type { ControllerPlatform, PlatformDetection } from "./platform-contract";
import { platformId, RAILWAY_PLATFORM, railwayIdentity } from "./platform-identity";

export const RAILWAY_VARIABLES = ["RAILWAY_PROJECT_ID", "RAILWAY_ENVIRONMENT_ID", "RAILWAY_SERVICE_ID", "RAILWAY_DEPLOYMENT_ID"] as const;

/** The variables' fields for an app's env.ts schema (each optional: off Railway none is set). */
export const railwayEnvShape = {
  RAILWAY_PROJECT_ID: platformId.optional(),
  RAILWAY_ENVIRONMENT_ID: platformId.optional(),
  RAILWAY_SERVICE_ID: platformId.optional(),
  RAILWAY_DEPLOYMENT_ID: platformId.optional(),
};

export const RAILWAY_HARNESS = "copyback-harness (railway)";

function detect(env: Readonly<Record<string, unknown>>): PlatformDetection {
  const set = RAILWAY_VARIABLES.filter((name) => env[name] !== undefined && env[name] !== null && env[name] !== "");
  if (set.length === 0) return { kind: "none" };
  const missing = RAILWAY_VARIABLES.filter((name) => !set.includes(name));
  if (missing.length > 0) {
    // A partial identity would name no exact deployment: refused rather than guessed (R-RW-6).
    return { kind: "invalid", platform: RAILWAY_PLATFORM, message: `Railway variables are incomplete: ${missing.join(", ")} not set` };
  }
  const parsed = railwayIdentity.safeParse({
    kind: RAILWAY_PLATFORM,
    projectId: env.RAILWAY_PROJECT_ID,
    environmentId: env.RAILWAY_ENVIRONMENT_ID,
    serviceId: env.RAILWAY_SERVICE_ID,
    deploymentId: env.RAILWAY_DEPLOYMENT_ID,
  });
  if (!parsed.success) return { kind: "invalid", platform: RAILWAY_PLATFORM, message: `Railway variables are not ids: ${z.prettifyError(parsed.error)}` };
  return { kind: "detected", identity: parsed.data, harness: RAILWAY_HARNESS };
}

export const railwayPlatform: ControllerPlatform = { name: RAILWAY_PLATFORM, harness: RAILWAY_HARNESS, detect };
