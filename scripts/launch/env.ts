// The launcher's configuration (the process behind the Quickstart's first command).
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { assertDeploymentBinding } from "@copyback/core/deployment";

const schema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  COPYBACK_HOME: z.string().min(1).default(path.join(os.homedir(), ".copyback")),
  COPYBACK_DB_PORT: z.coerce.number().int().min(1024).max(65_535).default(54329),
  COPYBACK_HOST: z.string().default("127.0.0.1"),
  COPYBACK_PORT: z.coerce.number().int().min(1).max(65_535).default(3100),
  COPYBACK_DEPLOYMENT_MODE: z.enum(["local", "authenticated"]).default("local"),
  COPYBACK_SEED: z.enum(["demo", "none"]).default("demo"),
  // Issue 23: this instance's host id, as the worker reads it (validated by core's resolveHostId);
  // unset: the one generated once into COPYBACK_HOME/host-id.
  COPYBACK_HOST_ID: z.string().optional(),
  WORKER_HEALTH_PORT: z.coerce.number().int().min(0).max(65_535).default(3101),
  COPYBACK_WEB_MODE: z.enum(["production", "development"]).default("production"),
  // Authenticated mode: the console's public origin (behind an https proxy, its https URL) and the
  // session signing secret. Both have launcher defaults (launch/auth.ts).
  COPYBACK_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  COPYBACK_AUTH_SECRET: z.string().min(32).optional(),
  BETTER_AUTH_SECRET: z.string().min(32).optional(),
});

export type LaunchEnv = z.infer<typeof schema>;

export function parseLaunchEnv(source: NodeJS.ProcessEnv): LaunchEnv {
  const parsed = schema.safeParse(source);
  if (!parsed.success) throw new Error(`Invalid configuration:\n${z.prettifyError(parsed.error)}`);
  const env = parsed.data;
  // Local mode trusts whoever reaches the console, so it must never listen beyond this machine.
  assertDeploymentBinding(env.COPYBACK_DEPLOYMENT_MODE, env.COPYBACK_HOST);
  return { ...env, COPYBACK_HOME: path.resolve(env.COPYBACK_HOME) };
}
