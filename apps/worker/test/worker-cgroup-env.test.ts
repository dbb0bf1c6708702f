// Issue 22 part 5: the worker-cgroup setting is off by default, takes only on or off, and cannot
// be combined with Railway's identity (one controller platform at a time).
import { describe, expect, it } from "vitest";
import { parseWorkerEnv } from "../src/env";

const base = { DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/copyback" };
const railway = { RAILWAY_PROJECT_ID: "proj-1", RAILWAY_ENVIRONMENT_ID: "env-1", RAILWAY_SERVICE_ID: "svc-1", RAILWAY_DEPLOYMENT_ID: "dep-1" };

describe("COPYBACK_WORKER_CGROUP", () => {
  it("is off unless asked for, on when asked", () => {
    expect(parseWorkerEnv(base).COPYBACK_WORKER_CGROUP).toBe("off");
    expect(parseWorkerEnv({ ...base, COPYBACK_WORKER_CGROUP: "on" }).COPYBACK_WORKER_CGROUP).toBe("on");
  });

  it("refuses another value, and Railway's identity beside it", () => {
    expect(() => parseWorkerEnv({ ...base, COPYBACK_WORKER_CGROUP: "yes" })).toThrow(/COPYBACK_WORKER_CGROUP/);
    expect(() => parseWorkerEnv({ ...base, ...railway, COPYBACK_WORKER_CGROUP: "on" })).toThrow(/two controller platforms/);
  });
});
