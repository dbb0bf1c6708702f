// How a board API key is shown: the shared key fields plus the user it acts as.
import { z } from "zod";
import { keyFieldsSelect, keySummaryFields, withStatus } from "./key-lifetime";

export const boardKeySelect = { ...keyFieldsSelect, user: { select: { id: true, name: true, email: true } } } as const;

export const boardKeySummary = z.object({
  ...keySummaryFields,
  user: z.object({ id: z.uuid(), name: z.string(), email: z.string() }),
});

type Row = Omit<z.infer<typeof boardKeySummary>, "status">;

export function toBoardKeySummary(row: Row, now: Date = new Date()): z.infer<typeof boardKeySummary> {
  return withStatus(row, now);
}
