// The only place the operator CLI reads the environment (DESIGN.md section 7).
import os from "node:os";
import { z } from "zod";

const schema = z.object({
  COPYBACK_HOME: z
    .string()
    .optional()
    .transform((value) => (value === undefined || value.trim() === "" ? undefined : value)),
});

export interface CliEnv {
  /** COPYBACK_HOME when set (the instance root); unset or empty means the default. */
  copybackHome: string | undefined;
  /** The user's home directory, for the default instance root `~/.copyback`. */
  userHome: string;
}

export function readCliEnv(): CliEnv {
  const parsed = schema.parse(process.env);
  return { copybackHome: parsed.COPYBACK_HOME, userHome: os.homedir() };
}
