// How an agent API key is shown: the shared key fields plus the agent it belongs to.
import { z } from "zod";
import { keyFieldsSelect, keySummaryFields, withStatus } from "../apiKeys/key-lifetime";

export const agentKeySelect = { ...keyFieldsSelect, agent: { select: { id: true, name: true } } } as const;

export const agentKeySummary = z.object({ ...keySummaryFields, agent: z.object({ id: z.uuid(), name: z.string() }) });

type Row = Omit<z.infer<typeof agentKeySummary>, "status">;

export function toAgentKeySummary(row: Row, now: Date = new Date()): z.infer<typeof agentKeySummary> {
  return withStatus(row, now);
}
