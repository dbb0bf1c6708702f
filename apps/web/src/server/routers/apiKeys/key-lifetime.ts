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

/** The columns every key summary shows: never its secret or hash, only the prefix that tells keys apart. */
export const keyFieldsSelect = {
  id: true,
  name: true,
  keyPrefix: true,
  createdAt: true,
  lastUsedAt: true,
  expiresAt: true,
  revokedAt: true,
} as const;

/** The summary shape of `keyFieldsSelect` plus the derived status; each key kind adds its owner. */
export const keySummaryFields = {
  id: z.uuid(),
  name: z.string(),
  keyPrefix: z.string(),
  status: keyStatus,
  createdAt: z.date(),
  lastUsedAt: z.date().nullable(),
  expiresAt: z.date().nullable(),
  revokedAt: z.date().nullable(),
};

/** A stored key row as a summary: the status is derived, never stored. */
export function withStatus<Row extends { revokedAt: Date | null; expiresAt: Date | null }>(row: Row, now: Date): Row & { status: z.infer<typeof keyStatus> } {
  return { ...row, status: statusOf(row, now) };
}
