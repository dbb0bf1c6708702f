// The only place the db CLIs read the environment (DESIGN.md section 7).
import { z } from "zod";

const schema = z.object({
  DATABASE_URL: z.string().min(1).optional(),
  COPYBACK_HOME: z.string().min(1).optional(),
});

export type CliEnv = z.infer<typeof schema>;

export function cliEnv(): CliEnv {
  return schema.parse(process.env);
}

/** The raw environment, for the runtime helpers that take one explicitly (instance root, port). */
export function processEnv(): NodeJS.ProcessEnv {
  return process.env;
}
