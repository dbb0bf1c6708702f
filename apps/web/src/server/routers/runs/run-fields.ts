// The run vocabulary shared by the run procedures' output schemas.
import { z } from "zod";

export const runStatusSchema = z.enum([
  "queued",
  "running",
  "succeeded",
  "failed",
  "cancelled",
  "timed_out",
]);
export const runtimeModeSchema = z.enum(["native", "legacy"]);
