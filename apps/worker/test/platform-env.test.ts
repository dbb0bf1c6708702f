// R-RW-1, R-RW-6: the worker's platform identity comes from the variables Railway sets, parsed in
// env.ts; without them the worker runs as before, and a partial set refuses to start.
import { describe, expect, it } from "vitest";
import { controllerPlatformOf, parseWorkerEnv } from "../src/env";

const base = { DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/copyback" };
const railway = { RAILWAY_PROJECT_ID: "proj-1", RAILWAY_ENVIRONMENT_ID: "env-1", RAILWAY_SERVICE_ID: "svc-1", RAILWAY_DEPLOYMENT_ID: "dep-1" };

describe("the worker's controller platform", () => {
  it("R-RW-1 a worker on Railway knows its exact deployment", () => {
    expect(controllerPlatformOf(parseWorkerEnv({ ...base, ...railway }))).toEqual({
      kind: "railway",
      projectId: "proj-1",
      environmentId: "env-1",
      serviceId: "svc-1",
      deploymentId: "dep-1",
    });
  });

  it("R-RW-6 a worker elsewhere has none (a hostname proves nothing)", () => {
    expect(controllerPlatformOf(parseWorkerEnv({ ...base, HOSTNAME: "railway-like-host" }))).toBeUndefined();
  });

  it("R-RW-1 a partial or malformed set of Railway variables is a configuration error naming what is missing", () => {
    const { RAILWAY_SERVICE_ID: _s, ...partial } = railway;
    expect(() => parseWorkerEnv({ ...base, ...partial })).toThrow(/RAILWAY_SERVICE_ID not set/);
    expect(() => parseWorkerEnv({ ...base, ...railway, RAILWAY_DEPLOYMENT_ID: "dep 1" })).toThrow(/Invalid worker configuration/);
  });
});
