// The web app's configuration, parsed once. process.env is read nowhere else (DESIGN.md section 7).
import { z } from "zod";

const schema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).describe("PostgreSQL connection string; the launcher sets it for the embedded database"),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  COPYBACK_DEPLOYMENT_MODE: z.enum(["local", "authenticated"]).default("local"),
  NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
});

export type WebEnv = z.infer<typeof schema>;

let cached: WebEnv | undefined;

/** Parsed lazily so `next build` does not need a database URL. */
export function env(): WebEnv {
  if (!cached) {
    const parsed = schema.safeParse(process.env);
    if (!parsed.success) {
      throw new Error(`Invalid web configuration:\n${z.prettifyError(parsed.error)}`);
    }
    cached = parsed.data;
  }
  return cached;
}
