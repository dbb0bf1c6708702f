// R-RW-3: the tenant's check of a harness stop receipt, before anything is written. Pure (no I/O;
// async only because WebCrypto is): the receipt's key by `kid` from the configured set (rotation),
// the disjoint audience, nbf/exp with a small clock tolerance and a bounded lifetime, and the exact
// stack, run, owner token and deployment the tenant asked about. Every refusal is a fixed code.
import { compactVerify, importJWK, type CryptoKey, type JWK } from "jose";
import { z } from "zod";
import { firstDuplicateKey } from "./json-duplicate-keys";
import { sameIdentity, type ControllerPlatformIdentity } from "./platform-identity";
import {
  STOP_RECEIPT_AUDIENCE,
  STOP_RECEIPT_MAX_BYTES,
  STOP_RECEIPT_MAX_LIFETIME_SECONDS,
  stopReceiptClaims,
  stopReceiptHeader,
  type StopReceiptClaims,
} from "./stop-receipt";

export type ReceiptRefusalCode =
  | "receipt_oversized"
  | "receipt_malformed"
  | "receipt_duplicate_claim"
  | "receipt_signature"
  | "receipt_kid"
  | "receipt_audience"
  | "receipt_expired"
  | "receipt_not_yet_valid"
  | "receipt_lifetime"
  | "receipt_stack"
  | "receipt_run"
  | "receipt_owner"
  | "receipt_deployment";

export type ReceiptVerdict = { kind: "valid"; claims: StopReceiptClaims; kid: string } | { kind: "refused"; code: ReceiptRefusalCode; message: string };

/** The harness public keys a tenant trusts, by kid (several during a rotation). */
export type HarnessKeySet = ReadonlyMap<string, CryptoKey>;

/** What the tenant asked about: the receipt must attest exactly this. */
export interface ReceiptExpectation {
  stack: string;
  runId: string;
  ownerToken: string;
  deployment: ControllerPlatformIdentity;
  now: Date;
  /** Clock skew tolerated on nbf and exp (default 5 s). */
  clockToleranceSeconds?: number;
}

const publicJwk = z.looseObject({ kty: z.literal("OKP"), crv: z.literal("Ed25519"), x: z.string().min(1), kid: z.string().min(1).max(128) });
export const harnessPublicKeys = z.object({ keys: z.array(publicJwk).min(1) });

/** Imports a configured JWK set (public Ed25519 keys only; a private part or a repeated kid is refused). */
export async function importHarnessKeys(jwks: unknown): Promise<HarnessKeySet> {
  const parsed = harnessPublicKeys.parse(jwks);
  const keys = new Map<string, CryptoKey>();
  for (const jwk of parsed.keys) {
    if ("d" in jwk) throw new Error(`harness key ${jwk.kid}: a private key was configured where only public keys belong`);
    if (keys.has(jwk.kid)) throw new Error(`harness key ${jwk.kid}: the kid is configured twice`);
    const { kid, ...key } = jwk;
    keys.set(kid, (await importJWK({ ...key, alg: "EdDSA" } as JWK, "EdDSA")) as CryptoKey);
  }
  return keys;
}

const refuse = (code: ReceiptRefusalCode, message: string): ReceiptVerdict => ({ kind: "refused", code, message });
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Decodes one base64url JSON segment, refusing repeated keys (JSON.parse would keep the last). */
function decodeSegment(segment: string): { ok: true; value: unknown } | { ok: false; duplicate: string | null } {
  try {
    const text = Buffer.from(segment, "base64url").toString("utf8");
    const value: unknown = JSON.parse(text);
    const duplicate = firstDuplicateKey(text);
    return duplicate === null ? { ok: true, value } : { ok: false, duplicate };
  } catch {
    return { ok: false, duplicate: null };
  }
}

export async function verifyStopReceipt(receipt: unknown, keys: HarnessKeySet, expect: ReceiptExpectation): Promise<ReceiptVerdict> {
  if (typeof receipt !== "string") return refuse("receipt_malformed", "the receipt is not a string");
  if (Buffer.byteLength(receipt, "utf8") > STOP_RECEIPT_MAX_BYTES) return refuse("receipt_oversized", `the receipt is over ${STOP_RECEIPT_MAX_BYTES} bytes`);
  const parts = receipt.split(".");
  // An empty signature part is left to the algorithm and signature checks ("alg: none" forgeries).
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  if (parts.length !== 3 || !BASE64URL.test(headerPart) || !BASE64URL.test(payloadPart) || !(signaturePart === "" || BASE64URL.test(signaturePart))) {
    return refuse("receipt_malformed", "the receipt is not a compact JWS (three base64url parts)");
  }

  const header = decodeSegment(headerPart);
  if (!header.ok) return header.duplicate ? refuse("receipt_duplicate_claim", `the header repeats "${header.duplicate}"`) : refuse("receipt_malformed", "the header is not JSON");
  // alg "none", HS256 (a public key used as an HMAC secret) or any other: refused before any key is used.
  const alg = (header.value as { alg?: unknown } | null)?.alg;
  if (alg !== "EdDSA") return refuse("receipt_signature", `the receipt's algorithm is ${JSON.stringify(alg)}, not EdDSA`);
  const parsedHeader = stopReceiptHeader.safeParse(header.value);
  if (!parsedHeader.success) return refuse("receipt_malformed", "the header is not a stop receipt's (alg, kid, typ)");
  const kid = parsedHeader.data.kid;
  const key = keys.get(kid);
  if (!key) return refuse("receipt_kid", `no configured harness key has kid ${JSON.stringify(kid)}`);

  try {
    await compactVerify(receipt, key, { algorithms: ["EdDSA"] });
  } catch {
    return refuse("receipt_signature", `the signature does not verify with harness key ${kid}`);
  }

  const payload = decodeSegment(payloadPart);
  if (!payload.ok) return payload.duplicate ? refuse("receipt_duplicate_claim", `the claims repeat "${payload.duplicate}"`) : refuse("receipt_malformed", "the claims are not JSON");
  const parsed = stopReceiptClaims.safeParse(payload.value);
  if (!parsed.success) return refuse("receipt_malformed", "the claims are not a stop receipt's");
  const claims = parsed.data;

  if (claims.aud !== STOP_RECEIPT_AUDIENCE) return refuse("receipt_audience", `the receipt's audience is ${JSON.stringify(claims.aud)}`);
  const now = Math.floor(expect.now.getTime() / 1000);
  const tolerance = expect.clockToleranceSeconds ?? 5;
  if (claims.exp <= claims.nbf || claims.exp - claims.iat > STOP_RECEIPT_MAX_LIFETIME_SECONDS || claims.nbf < claims.iat) {
    return refuse("receipt_lifetime", `a receipt lives at most ${STOP_RECEIPT_MAX_LIFETIME_SECONDS} s`);
  }
  if (now + tolerance < claims.nbf) return refuse("receipt_not_yet_valid", "the receipt is not valid yet");
  if (now - tolerance >= claims.exp) return refuse("receipt_expired", "the receipt has expired");
  if (claims.stack !== expect.stack) return refuse("receipt_stack", "the receipt is for another stack");
  if (claims.run !== expect.runId) return refuse("receipt_run", "the receipt is for another run");
  if (claims.ownerToken !== expect.ownerToken) return refuse("receipt_owner", "the receipt is for another owner token");
  if (!sameIdentity(claims.deployment, expect.deployment)) return refuse("receipt_deployment", "the receipt is for another deployment");
  return { kind: "valid", claims, kid };
}
