// API key material: the secret a script or agent presents, and the sha256 we keep of it.
// Keys are 32 random bytes (base64url) after a prefix that tells board keys from agent keys, so
// that a leaked key is recognisable (secret scanners) and routed to the right table without a
// second lookup. Only the hash is stored; a lookup by hash is the comparison (no timing leak of
// the secret: the database compares digests of attacker-chosen input).
import { createHash, randomBytes } from "node:crypto";

export type ApiKeyKind = "board" | "agent";

export const API_KEY_PREFIXES: Readonly<Record<ApiKeyKind, string>> = { board: "cbk_", agent: "cba_" };

/** Characters of the secret shown in the console to tell keys apart (prefix + 8). */
const DISPLAY_PREFIX_LENGTH = 12;

const KEY_PATTERN = /^cb([ka])_[A-Za-z0-9_-]{43}$/;

export interface GeneratedApiKey {
  /** Shown to the creator exactly once; never stored. */
  secret: string;
  /** sha256 (hex) of the secret: what the database keeps and looks keys up by. */
  hash: string;
  /** The first characters of the secret, safe to show in lists. */
  displayPrefix: string;
}

export function generateApiKey(kind: ApiKeyKind): GeneratedApiKey {
  const secret = `${API_KEY_PREFIXES[kind]}${randomBytes(32).toString("base64url")}`;
  return { secret, hash: hashApiKey(secret), displayPrefix: secret.slice(0, DISPLAY_PREFIX_LENGTH) };
}

export function hashApiKey(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** Which kind of key `secret` is shaped like; null for anything else (refused as invalid). */
export function apiKeyKindOf(secret: string): ApiKeyKind | null {
  const match = KEY_PATTERN.exec(secret);
  if (!match) return null;
  return match[1] === "k" ? "board" : "agent";
}

/** The bearer token of an Authorization header; undefined when there is no such header. */
export function bearerTokenOf(headers: Headers): string | undefined {
  const header = headers.get("authorization");
  if (header === null) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
  // A malformed Authorization header is an invalid credential, not an absent one.
  return match?.[1] ?? "";
}

/** lastUsedAt is written at most once per this interval per key (a hot key must not write per request). */
export const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/** A lastUsedAt before this instant is due for a write. */
export function lastUsedStaleBefore(now: Date): Date {
  return new Date(now.getTime() - LAST_USED_WRITE_INTERVAL_MS);
}

export function lastUsedIsStale(lastUsedAt: Date | null, now: Date): boolean {
  return lastUsedAt === null || lastUsedAt.getTime() <= lastUsedStaleBefore(now).getTime();
}
