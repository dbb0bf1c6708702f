// The launcher's configuration (the process behind the Quickstart's first command).
import os from "node:os";
import path from "node:path";
import { z } from "zod";

const schema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  COPYBACK_HOME: z.string().min(1).default(path.join(os.homedir(), ".copyback")),
  COPYBACK_DB_PORT: z.coerce.number().int().min(1024).max(65_535).default(54329),
  COPYBACK_HOST: z.string().default("127.0.0.1"),
  COPYBACK_PORT: z.coerce.number().int().min(1).max(65_535).default(3100),
  COPYBACK_DEPLOYMENT_MODE: z.enum(["local", "authenticated"]).default("local"),
  COPYBACK_SEED: z.enum(["demo", "none"]).default("demo"),
  WORKER_HEALTH_PORT: z.coerce.number().int().min(0).max(65_535).default(3101),
  COPYBACK_WEB_MODE: z.enum(["production", "development"]).default("production"),
});

export type LaunchEnv = z.infer<typeof schema>;

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

export function parseLaunchEnv(source: NodeJS.ProcessEnv): LaunchEnv {
  const parsed = schema.safeParse(source);
  if (!parsed.success) throw new Error(`Invalid configuration:\n${z.prettifyError(parsed.error)}`);
  const env = parsed.data;
  // Local mode trusts whoever reaches the console, so it must never listen beyond this machine.
  if (env.COPYBACK_DEPLOYMENT_MODE === "local" && !LOOPBACK.has(env.COPYBACK_HOST)) {
    throw new Error(
      `Local mode trusts every visitor as the board and only binds to loopback; COPYBACK_HOST=${env.COPYBACK_HOST} is not a loopback address. ` +
        "Use COPYBACK_HOST=127.0.0.1, or COPYBACK_DEPLOYMENT_MODE=authenticated to serve other machines.",
    );
  }
  return { ...env, COPYBACK_HOME: path.resolve(env.COPYBACK_HOME) };
}
