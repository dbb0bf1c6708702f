// The wire shape of core's TaskNotice (deriveTaskNotice is the one place that decides it). The
// output schema also strips anything undeclared, so a notice can never carry more than this.
import { z } from "zod";

export const taskNoticeSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("none") }),
  // `waiting`: R-RC-3, one sentence on what a deferred "Continue from saved sources" waits for.
  z.object({ kind: z.literal("restoring"), runId: z.uuid().nullable(), message: z.string(), waiting: z.string().optional() }),
  z.object({
    kind: z.literal("attention"),
    runId: z.uuid().nullable(),
    actionId: z.uuid(),
    cause: z.string(),
    message: z.string(),
  }),
]);
