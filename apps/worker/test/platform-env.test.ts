// R-RW-1, R-RW-6: the worker's platform identity comes from the variables Railway sets, parsed in
// env.ts; without them the worker runs as before, and a partial set refuses to start.
import { describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair } from "jose";
import { controllerPlatformOf, harnessConfigOf, parseWorkerEnv } from "../src/env";

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

describe("the worker's harness configuration", () => {
  it("R-RW-5 the tenant is given the harness URL, the fleet token, its stack and the harness public keys, all four or none", async () => {
    const { publicKey, privateKey } = await generateKeyPair("Ed25519", { extractable: true });
    const keys = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "harness-1" }] });
    const harness = { COPYBACK_HARNESS_URL: "https://harness.example", COPYBACK_HARNESS_FLEET_TOKEN: "f".repeat(40), COPYBACK_HARNESS_KEYS: keys, COPYBACK_STACK_ID: "stack-a" };
    const config = await harnessConfigOf(parseWorkerEnv({ ...base, ...harness }));
    expect(config).toMatchObject({ url: "https://harness.example", stack: "stack-a" });
    expect(config?.keys.has("harness-1")).toBe(true);
    expect(await harnessConfigOf(parseWorkerEnv(base))).toBeUndefined();
    const { COPYBACK_STACK_ID: _s, ...partial } = harness;
    expect(() => parseWorkerEnv({ ...base, ...partial })).toThrow(/go together/);
    expect(() => parseWorkerEnv({ ...base, ...harness, COPYBACK_HARNESS_KEYS: "not json" })).toThrow(/COPYBACK_HARNESS_KEYS/);
    // A private key where only public keys belong is refused, not used.
    const withPrivate = JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid: "harness-1" }] });
    await expect(harnessConfigOf(parseWorkerEnv({ ...base, ...harness, COPYBACK_HARNESS_KEYS: withPrivate }))).rejects.toThrow(/private key/);
  });
});
