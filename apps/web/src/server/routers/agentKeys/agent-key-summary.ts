// How an agent API key is shown: never its secret or hash, only the prefix that tells keys apart.
import { z } from "zod";
import { keyStatus, statusOf } from "../apiKeys/key-lifetime";

export const agentKeySelect = {
  id: true,
  name: true,
  keyPrefix: true,
  createdAt: true,
  lastUsedAt: true,
  expiresAt: true,
  revokedAt: true,
  agent: { select: { id: true, name: true } },
} as const;

export const agentKeySummary = z.object({
  id: z.uuid(),
  name: z.string(),
  keyPrefix: z.string(),
  agent: z.object({ id: z.uuid(), name: z.string() }),
  status: keyStatus,
  createdAt: z.date(),
  lastUsedAt: z.date().nullable(),
  expiresAt: z.date().nullable(),
  revokedAt: z.date().nullable(),
});

type Row = Omit<z.infer<typeof agentKeySummary>, "status">;

export function toAgentKeySummary(row: Row, now: Date = new Date()): z.infer<typeof agentKeySummary> {
  return { ...row, status: statusOf(row, now) };
}
