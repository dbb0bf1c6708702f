// The web app's configuration, parsed once. process.env is read nowhere else (DESIGN.md section 7).
import { z } from "zod";

const fields = z.object({
  DATABASE_URL: z
    .url({ protocol: /^postgres(ql)?$/ })
    .describe("PostgreSQL connection string; the launcher sets it for the embedded database"),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  COPYBACK_DEPLOYMENT_MODE: z.enum(["local", "authenticated"]).default("local"),
  NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
  // The console's public origin, e.g. https://copyback.example.com behind a TLS proxy. Session
  // cookies are Secure exactly when it is https; cookie-authenticated mutations must come from
  // it (CSRF). Unset: the origin of each request's Host header. The launcher sets it.
  COPYBACK_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  // Signs session cookies in authenticated mode (either name; COPYBACK_ wins). The launcher
  // generates one under the instance root when neither is set.
  COPYBACK_AUTH_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  BETTER_AUTH_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  // Local mode: the per-instance console secret (the launcher's `<COPYBACK_HOME>/console-secret`).
  // Its sign-in link gives a browser the console cookie; without it nobody is the local board.
  COPYBACK_CONSOLE_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  // GET /api/metrics for a Prometheus scraper: `Authorization: Bearer <token>`. Unset, only the
  // trusted local board and instance administrators may read the metrics.
  COPYBACK_METRICS_TOKEN: z.string().min(32, "must be at least 32 characters").optional(),
});

const schema = fields.superRefine((value, ctx) => {
  if (
    value.COPYBACK_DEPLOYMENT_MODE === "authenticated" &&
    !value.COPYBACK_AUTH_SECRET &&
    !value.BETTER_AUTH_SECRET
  ) {
    ctx.addIssue({
      code: "custom",
      path: ["COPYBACK_AUTH_SECRET"],
      message:
        "authenticated mode needs COPYBACK_AUTH_SECRET (or BETTER_AUTH_SECRET), at least 32 random characters",
    });
  }
  if (value.COPYBACK_DEPLOYMENT_MODE === "local" && !value.COPYBACK_CONSOLE_SECRET) {
    ctx.addIssue({
      code: "custom",
      path: ["COPYBACK_CONSOLE_SECRET"],
      message:
        "local mode needs COPYBACK_CONSOLE_SECRET (the launcher sets it from <COPYBACK_HOME>/console-secret), at least 32 random characters",
    });
  }
});

export type WebEnv = z.infer<typeof schema> & {
  /** COPYBACK_AUTH_SECRET ?? BETTER_AUTH_SECRET; always set in authenticated mode. */
  authSecret: string | undefined;
};

const VARIABLES = Object.keys(fields.shape);
let cached: { key: string; env: WebEnv } | undefined;

/**
 * Parsed lazily so `next build` does not need a database URL, and once per distinct value of the
 * variables it reads: a server's environment never changes, so it is parsed once; a test that
 * sets the variables gets the configuration it set, with no hook to reset a cache.
 */
export function env(): WebEnv {
  const key = JSON.stringify(VARIABLES.map((name) => process.env[name] ?? null));
  if (cached?.key !== key) {
    const parsed = schema.safeParse(process.env);
    if (!parsed.success) {
      throw new Error(`Invalid web configuration:\n${z.prettifyError(parsed.error)}`);
    }
    cached = {
      key,
      env: {
        ...parsed.data,
        authSecret: parsed.data.COPYBACK_AUTH_SECRET ?? parsed.data.BETTER_AUTH_SECRET,
      },
    };
  }
  return cached.env;
}

/**
 * COPYBACK_HOME, the instance root (the launcher sets it): the console reads the worker's
 * isolation report there, to say why agents are not isolated. Read on its own, so that a page
 * that only wants the report does not need the rest of the configuration; unset or empty: none.
 */
export function instanceRootForReports(): string | undefined {
  const parsed = z.string().min(1).safeParse(process.env.COPYBACK_HOME);
  return parsed.success ? parsed.data : undefined;
}

/** Issue 23: COPYBACK_HOST_ID as set (validated by core's resolveHostId); unset: the instance root's. */
export function configuredHostId(): string | undefined {
  return process.env.COPYBACK_HOST_ID;
}

/**
 * A Daytona key variable as this console's process sees it, for the Environments page, which
 * says only whether it is set (core's environmentsView never puts the value in its answer). Only
 * a DAYTONA_ name, as the daytona config requires: no other variable of the console can be asked for.
 */
export function daytonaKeyVariable(name: string): string | undefined {
  return /^DAYTONA_[A-Z0-9_]{1,100}$/.test(name) ? process.env[name] : undefined;
}
