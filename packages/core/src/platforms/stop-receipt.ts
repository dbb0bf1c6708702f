// The harness's stop receipt (R-RW-2, R-RW-3): a compact JWS, Ed25519 (`alg: EdDSA`), that says
// one exact Railway deployment is REMOVED with deploymentStopped true, for one stack, run and owner
// token. Shared by the harness that signs it (apps/harness) and the tenant that verifies it
// (verify-stop-receipt.ts), so both read one schema.
import { z } from "zod";
import { controllerPlatformIdentity } from "./platform-identity";

/** R-RW-3: an audience used for nothing else (no other token of the product carries it). */
export const STOP_RECEIPT_AUDIENCE = "copyback:workspace-worker-stop:v1";
export const STOP_RECEIPT_ISSUER = "copyback-harness";
/** The JWS `typ`: a receipt is not mistaken for another JWT signed with the same key. */
export const STOP_RECEIPT_TYPE = "copyback-stop+jwt";
/** A receipt is short-lived (minutes): the harness signs 2 minutes, a tenant accepts at most 10. */
export const STOP_RECEIPT_DEFAULT_TTL_SECONDS = 120;
export const STOP_RECEIPT_MAX_LIFETIME_SECONDS = 600;
/** Far above a real receipt (~900 bytes); a bigger one is refused before it is decoded. */
export const STOP_RECEIPT_MAX_BYTES = 4096;

export const stopReceiptHeader = z.strictObject({
  alg: z.literal("EdDSA"),
  kid: z.string().min(1).max(128),
  typ: z.literal(STOP_RECEIPT_TYPE),
});

const seconds = z.number().int().nonnegative();

export const stopReceiptClaims = z.strictObject({
  iss: z.literal(STOP_RECEIPT_ISSUER),
  aud: z.string(),
  iat: seconds,
  nbf: seconds,
  exp: seconds,
  jti: z.string().min(1).max(128),
  stack: z.string().min(1).max(128),
  run: z.string().min(1).max(128),
  ownerToken: z.string().min(16).max(256),
  deployment: controllerPlatformIdentity,
  // What the harness observed; it signs nothing else (R-RW-2).
  status: z.literal("REMOVED"),
  deploymentStopped: z.literal(true),
});
export type StopReceiptClaims = z.infer<typeof stopReceiptClaims>;
