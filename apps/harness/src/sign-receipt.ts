// R-RW-2: the stop receipt, Ed25519 (JWS EdDSA) with a short expiry and its own audience; the
// claims schema is core's (platforms/stop-receipt.ts), the one the tenant verifies against.
import { randomUUID } from "node:crypto";
import { importJWK, SignJWT, type CryptoKey, type JWK } from "jose";
import { STOP_RECEIPT_AUDIENCE, STOP_RECEIPT_ISSUER, STOP_RECEIPT_TYPE, stopReceiptClaims, type WorkerStopRequest } from "@copyback/core/platforms";

export interface Signer {
  kid: string;
  key: CryptoKey;
  ttlSeconds: number;
}

export async function importSigner(jwk: Record<string, unknown>, kid: string, ttlSeconds: number): Promise<Signer> {
  return { kid, ttlSeconds, key: (await importJWK({ ...jwk, alg: "EdDSA" } as JWK, "EdDSA")) as CryptoKey };
}

export async function signStopReceipt(signer: Signer, stack: string, request: WorkerStopRequest, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  // Checked against the schema the tenant uses: the harness never signs what a tenant would refuse as malformed.
  const claims = stopReceiptClaims.parse({
    iss: STOP_RECEIPT_ISSUER,
    aud: STOP_RECEIPT_AUDIENCE,
    iat,
    nbf: iat,
    exp: iat + signer.ttlSeconds,
    jti: randomUUID(),
    stack,
    run: request.runId,
    ownerToken: request.ownerToken,
    deployment: request.deployment,
    status: "REMOVED",
    deploymentStopped: true,
  });
  return new SignJWT(claims).setProtectedHeader({ alg: "EdDSA", kid: signer.kid, typ: STOP_RECEIPT_TYPE }).sign(signer.key);
}
