// How a board API key is shown: never its secret or hash, only the prefix that tells keys apart.
import { z } from "zod";
import { keyStatus, statusOf } from "./key-lifetime";

export const boardKeySelect = {
  id: true,
  name: true,
  keyPrefix: true,
  createdAt: true,
  lastUsedAt: true,
  expiresAt: true,
  revokedAt: true,
  user: { select: { id: true, name: true, email: true } },
} as const;

export const boardKeySummary = z.object({
  id: z.uuid(),
  name: z.string(),
  keyPrefix: z.string(),
  user: z.object({ id: z.uuid(), name: z.string(), email: z.string() }),
  status: keyStatus,
  createdAt: z.date(),
  lastUsedAt: z.date().nullable(),
  expiresAt: z.date().nullable(),
  revokedAt: z.date().nullable(),
});

type Row = Omit<z.infer<typeof boardKeySummary>, "status">;

export function toBoardKeySummary(row: Row, now: Date = new Date()): z.infer<typeof boardKeySummary> {
  return { ...row, status: statusOf(row, now) };
}
