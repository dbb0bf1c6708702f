// The worker's configuration, parsed once. process.env is read nowhere else (DESIGN.md section 7).
import { z } from "zod";

const schema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(5),
  COPYBACK_HOME: z.string().min(1).optional(),
  WORKER_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(600_000).default(2_000),
  WORKER_HEALTH_HOST: z.string().default("127.0.0.1"),
  WORKER_HEALTH_PORT: z.coerce.number().int().min(0).max(65_535).default(3101),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export type WorkerEnv = z.infer<typeof schema>;

export function parseWorkerEnv(source: NodeJS.ProcessEnv = process.env): WorkerEnv {
  const parsed = schema.safeParse(source);
  if (!parsed.success) throw new Error(`Invalid worker configuration:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
