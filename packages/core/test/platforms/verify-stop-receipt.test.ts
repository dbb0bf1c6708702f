// R-RW-3: the tenant's verifier refuses every forged or foreign receipt with its own code, and
// accepts the harness's real one (so each refusal below is a refusal of something that could pass).
import { createHmac } from "node:crypto";
import { exportSPKI } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { importHarnessKeys, verifyStopReceipt, type HarnessKeySet, type ReceiptExpectation } from "../../src/platforms/verify-stop-receipt";
import { STOP_RECEIPT_MAX_BYTES } from "../../src/platforms/stop-receipt";
import { b64, claimsFor, DEPLOYMENT, NOW, signRaw, testKey, type TestKey } from "./receipt-forge";

let current: TestKey;
let previous: TestKey;
let stranger: TestKey;
let keys: HarnessKeySet;
const expectation: ReceiptExpectation = {
  stack: "stack-a",
  runId: "11111111-1111-4111-8111-111111111111",
  ownerToken: "owner-token-0123456789abcdef",
  deployment: DEPLOYMENT,
  now: NOW,
};

beforeAll(async () => {
  current = await testKey("harness-2026-12");
  previous = await testKey("harness-2026-11");
  stranger = await testKey("harness-2026-12");
  keys = await importHarnessKeys({ keys: [current.publicJwk, previous.publicJwk] });
});

const nowS = Math.floor(NOW.getTime() / 1000);

/** One forged receipt per row, each with the code it must be refused with. */
const corpus: { name: string; code: string; receipt: () => Promise<string> }[] = [
  { name: "signed by a key the tenant does not trust (same kid)", code: "receipt_signature", receipt: () => signRaw(stranger, claimsFor()) },
  { name: "a kid that is not configured", code: "receipt_kid", receipt: () => signRaw({ ...current, kid: "harness-1999" }, claimsFor()) },
  { name: "the previous key's kid on a receipt signed by the current key", code: "receipt_signature", receipt: () => signRaw({ ...current, kid: previous.kid }, claimsFor()) },
  { name: "expired", code: "receipt_expired", receipt: () => signRaw(current, claimsFor({ iat: nowS - 300, nbf: nowS - 300, exp: nowS - 60 })) },
  { name: "not yet valid", code: "receipt_not_yet_valid", receipt: () => signRaw(current, claimsFor({ iat: nowS + 60, nbf: nowS + 60, exp: nowS + 180 })) },
  { name: "a lifetime over the 10-minute bound", code: "receipt_lifetime", receipt: () => signRaw(current, claimsFor({ exp: nowS + 3600 })) },
  { name: "another audience (a token for another use)", code: "receipt_audience", receipt: () => signRaw(current, claimsFor({ aud: "copyback:api" })) },
  { name: "another stack", code: "receipt_stack", receipt: () => signRaw(current, claimsFor({ stack: "stack-b" })) },
  { name: "another run", code: "receipt_run", receipt: () => signRaw(current, claimsFor({ run: "22222222-2222-4222-8222-222222222222" })) },
  { name: "another owner token", code: "receipt_owner", receipt: () => signRaw(current, claimsFor({ ownerToken: "another-owner-token-0123456789" })) },
  { name: "another deployment of the same service", code: "receipt_deployment", receipt: () => signRaw(current, claimsFor({ deployment: { ...DEPLOYMENT, deploymentId: "other-deployment" } })) },
  { name: "another service", code: "receipt_deployment", receipt: () => signRaw(current, claimsFor({ deployment: { ...DEPLOYMENT, serviceId: "other-service" } })) },
  { name: "a live deployment's status", code: "receipt_malformed", receipt: () => signRaw(current, { ...claimsFor(), status: "SUCCESS" }) },
  { name: "deploymentStopped false", code: "receipt_malformed", receipt: () => signRaw(current, { ...claimsFor(), deploymentStopped: false }) },
  { name: "a claim missing", code: "receipt_malformed", receipt: () => signRaw(current, (({ ownerToken: _o, ...rest }) => rest)(claimsFor())) },
  { name: "truncated in the signature", code: "receipt_signature", receipt: async () => (await signRaw(current, claimsFor())).slice(0, -10) },
  { name: "truncated to two parts", code: "receipt_malformed", receipt: async () => (await signRaw(current, claimsFor())).split(".").slice(0, 2).join(".") },
  { name: "truncated in the claims (re-joined)", code: "receipt_signature", receipt: async () => { const [h, p, s] = (await signRaw(current, claimsFor())).split("."); return `${h}.${p!.slice(0, -8)}.${s}`; } },
  { name: "alg none, no signature", code: "receipt_signature", receipt: async () => `${b64(JSON.stringify({ alg: "none", kid: current.kid, typ: "copyback-stop+jwt" }))}.${b64(JSON.stringify(claimsFor()))}.` },
  { name: "alg none with a copied signature", code: "receipt_signature", receipt: async () => { const s = (await signRaw(current, claimsFor())).split(".")[2]; return `${b64(JSON.stringify({ alg: "none", kid: current.kid, typ: "copyback-stop+jwt" }))}.${b64(JSON.stringify(claimsFor()))}.${s}`; } },
  {
    name: "HS256 keyed with the harness public key (the key-confusion forgery)",
    code: "receipt_signature",
    receipt: async () => {
      const input = `${b64(JSON.stringify({ alg: "HS256", kid: current.kid, typ: "copyback-stop+jwt" }))}.${b64(JSON.stringify(claimsFor()))}`;
      const pem = await exportSPKI(current.publicKey);
      return `${input}.${createHmac("sha256", pem).update(input).digest("base64url")}`;
    },
  },
  { name: "a repeated claim (run twice: JSON.parse would keep the second)", code: "receipt_duplicate_claim", receipt: () => signRaw(current, JSON.stringify(claimsFor()).replace(/^\{/, '{"run":"22222222-2222-4222-8222-222222222222",')) },
  { name: "a repeated claim spelled with an escape", code: "receipt_duplicate_claim", receipt: () => signRaw(current, JSON.stringify(claimsFor()).replace(/\}$/, ',"\\u0072un":"x"}')) },
  { name: "a repeated key inside the deployment", code: "receipt_duplicate_claim", receipt: () => signRaw(current, JSON.stringify(claimsFor()).replace('"deploymentId":', '"deploymentId":"other","deploymentId":')) },
  { name: "a repeated header parameter", code: "receipt_duplicate_claim", receipt: async () => { const [, p, s] = (await signRaw(current, claimsFor())).split("."); return `${b64(`{"alg":"EdDSA","kid":"${current.kid}","kid":"harness-1999","typ":"copyback-stop+jwt"}`)}.${p}.${s}`; } },
  { name: "an extra header parameter (crit)", code: "receipt_malformed", receipt: () => signRaw(current, claimsFor(), { alg: "EdDSA", kid: current.kid, typ: "copyback-stop+jwt", crit: ["exp"], exp: 1 }) },
  { name: "another typ (a JWT for another use)", code: "receipt_malformed", receipt: () => signRaw(current, claimsFor(), { alg: "EdDSA", kid: current.kid, typ: "JWT" }) },
  { name: "oversized", code: "receipt_oversized", receipt: () => signRaw(current, { ...claimsFor(), padding: "x".repeat(STOP_RECEIPT_MAX_BYTES) }) },
  { name: "not a JWS at all", code: "receipt_malformed", receipt: async () => "not a receipt" },
];

describe("verifyStopReceipt", () => {
  it("R-RW-3 accepts the harness's receipt (current key), and one signed by the previous key during a rotation", async () => {
    const verdict = await verifyStopReceipt(await signRaw(current, claimsFor()), keys, expectation);
    expect(verdict).toMatchObject({ kind: "valid", kid: current.kid, claims: { run: expectation.runId, deployment: DEPLOYMENT } });
    expect(await verifyStopReceipt(await signRaw(previous, claimsFor()), keys, expectation)).toMatchObject({ kind: "valid", kid: previous.kid });
  });

  it.each(corpus)("R-RW-3 refuses a forged receipt: $name -> $code", async ({ receipt, code }) => {
    expect(await verifyStopReceipt(await receipt(), keys, expectation)).toMatchObject({ kind: "refused", code });
  });

  it("R-RW-3 tolerates 5 s of clock skew on nbf and exp, not more", async () => {
    const skewed = await signRaw(current, claimsFor({ iat: nowS + 4, nbf: nowS + 4, exp: nowS + 120 }));
    expect(await verifyStopReceipt(skewed, keys, expectation)).toMatchObject({ kind: "valid" });
    const justExpired = await signRaw(current, claimsFor({ iat: nowS - 125, nbf: nowS - 125, exp: nowS - 5 }));
    expect(await verifyStopReceipt(justExpired, keys, expectation)).toMatchObject({ kind: "refused", code: "receipt_expired" });
  });

  it("R-RW-3 refuses a receipt that is not a string", async () => {
    expect(await verifyStopReceipt({ receipt: 1 }, keys, expectation)).toMatchObject({ kind: "refused", code: "receipt_malformed" });
  });
});

describe("importHarnessKeys", () => {
  it("R-RW-3 refuses a private key, a repeated kid, a non-Ed25519 key and an empty set, with a clear error", async () => {
    const privateJwk = { ...current.publicJwk, d: "AAAA" };
    await expect(importHarnessKeys({ keys: [privateJwk] })).rejects.toThrow("a private key was configured");
    await expect(importHarnessKeys({ keys: [current.publicJwk, { ...previous.publicJwk, kid: current.kid }] })).rejects.toThrow("configured twice");
    await expect(importHarnessKeys({ keys: [{ kty: "oct", k: "c2VjcmV0", kid: "hmac" }] })).rejects.toThrow();
    await expect(importHarnessKeys({ keys: [] })).rejects.toThrow();
  });
});
