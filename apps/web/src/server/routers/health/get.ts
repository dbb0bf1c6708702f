import { z } from "zod";
import { publicProcedure } from "~/server/trpc";

export const healthOutput = z.object({
  status: z.literal("ok"),
  database: z.object({ reachable: z.boolean(), latencyMs: z.number() }),
  time: z.date(),
});

/** Liveness and database reachability; the launcher and CI poll the REST twin at /api/health. */
export const getHealth = publicProcedure.output(healthOutput).query(async ({ ctx }) => {
  const started = performance.now();
  await ctx.db.$queryRaw`SELECT 1`;
  return {
    status: "ok" as const,
    database: { reachable: true, latencyMs: Math.round((performance.now() - started) * 10) / 10 },
    time: new Date(),
  };
});
