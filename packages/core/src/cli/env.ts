// The only place the operator CLI reads the environment (DESIGN.md section 7).
import os from "node:os";
import { z } from "zod";

const optionalText = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === "" ? undefined : value.trim()));

const schema = z.object({
  COPYBACK_HOME: optionalText,
  DATABASE_URL: optionalText,
  COPYBACK_DB_PORT: optionalText,
  // Issue 23: validated where it is used (deployment/host-id.ts), so an empty value is an error, not a default.
  COPYBACK_HOST_ID: z.string().optional(),
});

export interface CliEnv {
  /** COPYBACK_HOME when set (the instance root); unset or empty means the default. */
  copybackHome: string | undefined;
  /** The user's home directory, for the default instance root `~/.copyback`. */
  userHome: string;
  /** DATABASE_URL (the `recovery` commands); unset: the instance root's embedded database. */
  databaseUrl?: string | undefined;
  /** COPYBACK_DB_PORT, validated where it is used (the embedded database's port). */
  embeddedPort?: string | undefined;
  /** COPYBACK_HOST_ID (issue 23); unset: the instance root's host id. */
  hostId?: string | undefined;
}

export function readCliEnv(): CliEnv {
  const parsed = schema.parse(process.env);
  return {
    copybackHome: parsed.COPYBACK_HOME,
    userHome: os.homedir(),
    databaseUrl: parsed.DATABASE_URL,
    embeddedPort: parsed.COPYBACK_DB_PORT,
    hostId: parsed.COPYBACK_HOST_ID,
  };
}
