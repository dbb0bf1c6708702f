// Test helpers that sign stop receipts the way the harness does, and forge them every way the
// verifier must refuse (raw header and payload text, so repeated keys survive).
import { KeyObject, sign } from "node:crypto";
import { exportJWK, generateKeyPair, type CryptoKey } from "jose";
import { STOP_RECEIPT_AUDIENCE, STOP_RECEIPT_ISSUER, STOP_RECEIPT_TYPE, type StopReceiptClaims } from "../../src/platforms/stop-receipt";
import type { RailwayIdentity } from "../../src/platforms/platform-identity";

export interface TestKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: Record<string, unknown>;
}

export async function testKey(kid: string): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair("Ed25519", { extractable: true });
  return { kid, privateKey, publicKey, publicJwk: { ...(await exportJWK(publicKey)), kid } };
}

export const DEPLOYMENT: RailwayIdentity = {
  kind: "railway",
  projectId: "7e9c1b0a-0000-4000-8000-000000000001",
  environmentId: "7e9c1b0a-0000-4000-8000-000000000002",
  serviceId: "7e9c1b0a-0000-4000-8000-000000000003",
  deploymentId: "7e9c1b0a-0000-4000-8000-000000000004",
};

export const NOW = new Date("2026-12-07T03:00:00Z");
const nowS = Math.floor(NOW.getTime() / 1000);

export function claimsFor(over: Partial<StopReceiptClaims> = {}): StopReceiptClaims {
  return {
    iss: STOP_RECEIPT_ISSUER,
    aud: STOP_RECEIPT_AUDIENCE,
    iat: nowS,
    nbf: nowS,
    exp: nowS + 120,
    jti: "receipt-1",
    stack: "stack-a",
    run: "11111111-1111-4111-8111-111111111111",
    ownerToken: "owner-token-0123456789abcdef",
    deployment: DEPLOYMENT,
    status: "REMOVED",
    deploymentStopped: true,
    ...over,
  };
}

/**
 * Signs `payload` (an object, or raw JSON text) with Ed25519 under `header` (default: the
 * harness's), by hand with node:crypto: a library signer would refuse the odd headers forged here.
 */
export async function signRaw(key: TestKey, payload: object | string, header: Record<string, unknown> = { alg: "EdDSA", kid: key.kid, typ: STOP_RECEIPT_TYPE }): Promise<string> {
  const input = `${b64(JSON.stringify(header))}.${b64(typeof payload === "string" ? payload : JSON.stringify(payload))}`;
  return `${input}.${sign(null, Buffer.from(input), KeyObject.from(key.privateKey)).toString("base64url")}`;
}

export const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64url");
