// Shared by board and agent keys: how long a new key lives and how a stored key reads.
import { z } from "zod";

/** Days until a new key expires; omitted: it never expires (until revoked). */
export const expiresInDaysInput = z.number().int().min(1).max(3650).optional();

export const keyNameInput = z.string().trim().min(1, "Give the key a name").max(100);

export const keyStatus = z.enum(["active", "expired", "revoked"]);

export function expiresAtFrom(expiresInDays: number | undefined, now: Date): Date | null {
  return expiresInDays === undefined ? null : new Date(now.getTime() + expiresInDays * 24 * 60 * 60 * 1000);
}

export function statusOf(key: { revokedAt: Date | null; expiresAt: Date | null }, now: Date): z.infer<typeof keyStatus> {
  if (key.revokedAt) return "revoked";
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return "expired";
  return "active";
}
