// The harness as a real process against the Railway emulator (R-RW-2, R-RW-5): the fleet token
// authorizes the request only; the harness reads the deployment with its own Railway token and
// signs an Ed25519 receipt only for REMOVED with deploymentStopped true, which the tenant's own
// verifier (core) accepts; every other answer is a refusal with its fixed code and no receipt.
import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { importHarnessKeys, verifyStopReceipt, WORKER_STOP_PATH, type RailwayIdentity, type WorkerStopRequest } from "@copyback/core/platforms";
import { RailwayEmulator } from "@copyback/core/test-support/railway/railway-emulator";
import { runHarnessExpectingExit, startHarness, type HarnessChild } from "@copyback/core/test-support/railway/harness-process";

const FLEET_TOKEN = "fleet-token-0123456789abcdef0123456789";
const RAILWAY_TOKEN = "railway-team-token-of-the-harness";
const STACK = { projectId: "proj-a", environmentId: "env-prod", serviceId: "svc-worker" };
const KID = "harness-2026-12";

let railway: RailwayEmulator;
let harness: HarnessChild;
let publicJwk: Record<string, unknown>;
let baseEnv: Record<string, string>;

beforeAll(async () => {
  railway = await new RailwayEmulator(RAILWAY_TOKEN).start();
  const { privateKey, publicKey } = await generateKeyPair("Ed25519", { extractable: true });
  publicJwk = { ...(await exportJWK(publicKey)), kid: KID };
  baseEnv = {
    HARNESS_FLEET_TOKEN: FLEET_TOKEN,
    HARNESS_STACKS: JSON.stringify({ "stack-a": STACK }),
    HARNESS_SIGNING_KEY: JSON.stringify(await exportJWK(privateKey)),
    HARNESS_SIGNING_KID: KID,
    HARNESS_RECEIPT_TTL_SECONDS: "90",
    RAILWAY_API_URL: railway.url,
    RAILWAY_API_TOKEN: RAILWAY_TOKEN,
    RAILWAY_TIMEOUT_MS: "700",
  };
  harness = await startHarness(baseEnv);
});

afterAll(async () => {
  await harness?.stop();
  await railway?.stop();
});

let n = 0;
let request: WorkerStopRequest & { deployment: RailwayIdentity };
beforeEach(() => {
  n += 1;
  const deploymentId = `dep-${n}`;
  railway.addDeployment({ id: deploymentId, status: "SUCCESS", ...STACK });
  railway.faults.length = 0;
  request = { stack: "stack-a", runId: `run-${n}`, ownerToken: `owner-token-${n}-0123456789`, deployment: { kind: "railway", ...STACK, deploymentId } };
});

async function ask(body: unknown, token: string | null = FLEET_TOKEN, init: RequestInit = {}) {
  const response = await fetch(`${harness.url}${WORKER_STOP_PATH}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...init,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function verify(receipt: unknown, at = new Date()) {
  return verifyStopReceipt(receipt, await importHarnessKeys({ keys: [publicJwk] }), {
    stack: "stack-a",
    runId: request.runId,
    ownerToken: request.ownerToken,
    deployment: request.deployment,
    now: at,
  });
}

describe("the harness process", () => {
  it("R-RW-2 signs only once Railway reports the exact deployment REMOVED with deploymentStopped true; the tenant's verifier accepts it", async () => {
    const id = request.deployment.deploymentId;
    expect(await ask(request)).toMatchObject({ status: 409, body: { outcome: "refused", code: "deployment_live", status: "SUCCESS" } });
    railway.setStatus(id, "REMOVING", true);
    expect(await ask(request)).toMatchObject({ status: 409, body: { code: "deployment_live", status: "REMOVING" } });
    railway.setStatus(id, "REMOVED", false);
    expect(await ask(request)).toMatchObject({ status: 409, body: { code: "deployment_live", status: "REMOVED" } });
    railway.setStatus(id, "REMOVED", true);
    const signed = await ask(request);
    expect(signed).toMatchObject({ status: 200, body: { outcome: "stopped", receipt: expect.any(String) } });
    const verdict = await verify(signed.body.receipt);
    expect(verdict).toMatchObject({ kind: "valid", kid: KID, claims: { stack: "stack-a", run: request.runId, ownerToken: request.ownerToken, deployment: request.deployment } });
    if (verdict.kind !== "valid") throw new Error("unreachable");
    // A short expiry: the configured 90 s.
    expect(verdict.claims.exp - verdict.claims.iat).toBe(90);
    expect(await verify(signed.body.receipt, new Date(Date.now() + 120_000))).toMatchObject({ kind: "refused", code: "receipt_expired" });
  });

  it("R-RW-2 CRASHED, SLEEPING and the other live states are refused as deployment_live", async () => {
    for (const status of ["CRASHED", "SLEEPING", "DEPLOYING", "NEEDS_APPROVAL"] as const) {
      railway.setStatus(request.deployment.deploymentId, status, status === "CRASHED");
      expect(await ask(request)).toMatchObject({ status: 409, body: { code: "deployment_live", status } });
    }
  });

  it("R-RW-5 the fleet token authorizes the request only: missing or wrong, nothing is read from Railway", async () => {
    const before = railway.requests.length;
    expect(await ask(request, null)).toMatchObject({ status: 401, body: { code: "unauthorized" } });
    expect(await ask(request, "not-the-fleet-token")).toMatchObject({ status: 401, body: { code: "unauthorized" } });
    expect(await ask(request, `${FLEET_TOKEN}x`)).toMatchObject({ status: 401, body: { code: "unauthorized" } });
    expect(railway.requests.length).toBe(before);
  });

  it("R-RW-5 Railway is read with the harness's own token, never anything of the tenant's request", async () => {
    railway.setStatus(request.deployment.deploymentId, "REMOVED");
    expect(await ask(request)).toMatchObject({ status: 200 });
    const last = railway.requests.at(-1);
    expect(last).toEqual({ authorization: `Bearer ${RAILWAY_TOKEN}`, variables: { id: request.deployment.deploymentId } });
  });

  it("R-RW-2 the stack's resources come from the harness's configuration: a request naming another service, or an unknown stack, is refused unread", async () => {
    const before = railway.requests.length;
    expect(await ask({ ...request, deployment: { ...request.deployment, serviceId: "svc-of-another-stack" } })).toMatchObject({ status: 403, body: { code: "deployment_not_owned" } });
    expect(await ask({ ...request, stack: "stack-z" })).toMatchObject({ status: 403, body: { code: "unknown_stack" } });
    expect(railway.requests.length).toBe(before);
  });

  it("R-RW-2 a REMOVED deployment that Railway places in another project is not attested (the request's word is not enough)", async () => {
    railway.addDeployment({ id: request.deployment.deploymentId, status: "REMOVED", deploymentStopped: true, ...STACK, projectId: "proj-of-someone-else" });
    expect(await ask(request)).toMatchObject({ status: 403, body: { code: "deployment_not_owned" } });
  });

  it("R-RW-2 missing, unavailable and truncated evidence keeps the fence: no receipt, each with its code", async () => {
    railway.setStatus(request.deployment.deploymentId, "REMOVED");
    expect(await ask({ ...request, deployment: { ...request.deployment, deploymentId: "dep-unknown" } })).toMatchObject({ status: 409, body: { code: "deployment_missing" } });
    const cases = [
      [{ kind: "hang" }, 503, "evidence_unavailable"],
      [{ kind: "graphql_error", message: "Problem processing request" }, 503, "evidence_unavailable"],
      [{ kind: "http_status", status: 502 }, 503, "evidence_unavailable"],
      [{ kind: "truncate", bytes: 60 }, 502, "evidence_truncated"],
    ] as const;
    for (const [fault, status, code] of cases) {
      railway.faults.push(fault);
      const answer = await ask(request);
      expect(answer, fault.kind).toMatchObject({ status, body: { outcome: "refused", code } });
      expect(answer.body.receipt).toBeUndefined();
    }
    // After the faults the same request is signed: the refusals were the faults'.
    expect(await ask(request)).toMatchObject({ status: 200, body: { outcome: "stopped" } });
  });

  it("R-RW-2 a harness whose Railway token Railway refuses signs nothing", async () => {
    const other = await startHarness({ ...baseEnv, RAILWAY_API_TOKEN: "revoked-token" });
    try {
      railway.setStatus(request.deployment.deploymentId, "REMOVED");
      const response = await fetch(`${other.url}${WORKER_STOP_PATH}`, { method: "POST", headers: { authorization: `Bearer ${FLEET_TOKEN}` }, body: JSON.stringify(request) });
      expect({ status: response.status, body: await response.json() }).toMatchObject({ status: 503, body: { code: "evidence_unavailable" } });
    } finally {
      expect(await other.stop()).toBe(0);
    }
  });

  it("R-RW-5 bad requests get a clear refusal and read nothing: not JSON, a repeated key, a missing field, an oversized body, another path or method", async () => {
    const before = railway.requests.length;
    expect(await ask("{not json")).toMatchObject({ status: 400, body: { code: "invalid_request" } });
    expect(await ask(JSON.stringify(request).replace(/^\{/, '{"runId":"run-of-someone-else",'))).toMatchObject({ status: 400, body: { code: "invalid_request", message: expect.stringContaining("runId") } });
    expect(await ask({ ...request, ownerToken: undefined })).toMatchObject({ status: 400, body: { code: "invalid_request" } });
    expect(await ask({ ...request, padding: "x".repeat(10_000) })).toMatchObject({ status: 413, body: { code: "invalid_request" } });
    expect((await fetch(`${harness.url}/v1/tenant/other`, { method: "POST" })).status).toBe(404);
    expect((await fetch(`${harness.url}${WORKER_STOP_PATH}`)).status).toBe(405);
    expect(railway.requests.length).toBe(before);
  });

  it("R-RW-5 logs answers without tokens or receipts", () => {
    const out = harness.output();
    expect(out).toContain('"msg":"signed"');
    expect(out).not.toContain(FLEET_TOKEN);
    expect(out).not.toContain(RAILWAY_TOKEN);
    expect(out).not.toContain("eyJ");
  });
});

describe("the harness's configuration", () => {
  it("R-RW-5 refuses to start without a fleet token, stacks or signing key, saying which", async () => {
    const { HARNESS_FLEET_TOKEN: _f, ...noToken } = baseEnv;
    const refused = await runHarnessExpectingExit(noToken);
    expect(refused.code).toBe(2);
    expect(refused.output).toContain("HARNESS_FLEET_TOKEN");
    const badStacks = await runHarnessExpectingExit({ ...baseEnv, HARNESS_STACKS: "{}" });
    expect(badStacks).toMatchObject({ code: 2, output: expect.stringContaining("HARNESS_STACKS") });
    const publicOnly = await runHarnessExpectingExit({ ...baseEnv, HARNESS_SIGNING_KEY: JSON.stringify(publicJwk) });
    expect(publicOnly).toMatchObject({ code: 2, output: expect.stringContaining("HARNESS_SIGNING_KEY") });
  });
});
