// The wire shape of core's TaskNotice (deriveTaskNotice is the one place that decides it). The
// output schema also strips anything undeclared, so a notice can never carry more than this.
import { z } from "zod";

export const taskNoticeSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("none") }),
  z.object({ kind: z.literal("restoring"), runId: z.uuid().nullable(), message: z.string() }),
  z.object({
    kind: z.literal("attention"),
    runId: z.uuid().nullable(),
    actionId: z.uuid(),
    cause: z.string(),
    message: z.string(),
  }),
]);
