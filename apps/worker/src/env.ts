// The worker's configuration, parsed once. process.env is read nowhere else (DESIGN.md section 7).
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { detectControllerPlatform, harnessPublicKeys, importHarnessKeys, railwayEnvShape, type ControllerPlatformIdentity } from "@copyback/core/platforms";
import type { TenantHarnessConfig } from "@copyback/core/recovery";

const schema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }),
  // Default: the dispatch concurrency plus four (the loop's claim, run log writes, finalization).
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).optional(),
  // The instance root (sandboxes, directory-merge locks, staging). The launcher passes its own
  // (scripts/launch/env.ts); the default is the launcher's, so a worker started by hand next to a
  // launched console uses the same sandboxes and, above all, the same directory-merge locks.
  COPYBACK_HOME: z
    .string()
    .min(1)
    .default(path.join(os.homedir(), ".copyback"))
    .transform((value) => path.resolve(value)),
  // Issue 23: this instance's host id (lowercase letters, digits, '.', '_', '-'; at most 63). Unset:
  // generated once into COPYBACK_HOME/host-id and read back on every start. Validated at start
  // (deployment/host-id.ts parseHostId): a bad value stops the worker with a clear error.
  COPYBACK_HOST_ID: z.string().optional(),
  // How many runs this worker drives at once (claimed runs never wait: a pass claims only free slots).
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  // On SIGTERM: how long runs in flight may take to finish before they are cancelled.
  WORKER_DRAIN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(30_000),
  // After that deadline, how long cancelled runs get to settle (a finalization in flight is
  // awaited anyway before the database closes).
  WORKER_ABORT_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  // The console's base URL, passed to agents as COPYBACK_API_URL (the finish API lives there).
  COPYBACK_API_URL: z.url({ protocol: /^https?$/ }).optional(),
  // How long one copyback try may spend exporting a sandbox before it is aborted and retried
  // (finalization/export-deadline.ts); the run's finalization lock is held meanwhile.
  COPYBACK_EXPORT_TIMEOUT_MS: z.coerce.number().int().min(1).max(2 ** 31 - 1).default(600_000),
  // How often the reconciler passes over its sweeps (finalization recovery, orphans, holds).
  RECONCILE_INTERVAL_MS: z.coerce.number().int().min(10).max(600_000).default(5_000),
  // The fallback poll between claim passes; a queued run normally wakes the loop at once through
  // LISTEN copyback_events (wake-listener.ts) unless WORKER_LISTEN is "off".
  WORKER_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(600_000).default(2_000),
  WORKER_LISTEN: z.enum(["on", "off"]).default("on"),
  WORKER_HEALTH_HOST: z.string().default("127.0.0.1"),
  WORKER_HEALTH_PORT: z.coerce.number().int().min(0).max(65_535).default(3101),
  // The Prometheus endpoint (metrics-server.ts): off unless "on"; its own listener and port.
  WORKER_METRICS: z.enum(["on", "off"]).default("off"),
  WORKER_METRICS_HOST: z.string().default("127.0.0.1"),
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(3102),
  // The local provider's isolation: "auto" (bubblewrap where it works), "bubblewrap" (required), or
  // "none" (agents run as plain process groups on the host: not confined, see README).
  COPYBACK_LOCAL_ISOLATION: z.enum(["auto", "bubblewrap", "none"]).default("auto"),
  // How long the Daytona plugin waits for one lifecycle move (create, start, stop, delete) to settle
  // before it answers unconfirmed (the cleanup stays pending and is retried). Unset: 300 s.
  COPYBACK_DAYTONA_LIFECYCLE_TIMEOUT_SEC: z.coerce.number().int().min(1).max(3_600).optional(),
  // Opt-in observation seam of the torture suite (merge-trace.ts): unset, nothing is traced.
  COPYBACK_MERGE_TRACE_FILE: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  // R-RW-1: set by Railway in every deployment (all four or none); the worker's owner receipts
  // then name its exact deployment, which the cloud harness can prove removed (apps/harness).
  ...railwayEnvShape,
  // R-RW-2, R-RW-5: the cloud harness that proves a Railway controller's stop (apps/harness). All
  // four or none; without them unverified owners stay fenced for an operator. The tenant holds no
  // Railway credential: only the harness's URL, the fleet token, this stack's id and the
  // harness's public keys (a JWK set, several during a key rotation).
  COPYBACK_HARNESS_URL: z.url({ protocol: /^https?$/ }).optional(),
  COPYBACK_HARNESS_FLEET_TOKEN: z.string().min(32).optional(),
  COPYBACK_HARNESS_KEYS: z
    .string()
    .transform((text, ctx) => {
      try {
        return harnessPublicKeys.parse(JSON.parse(text));
      } catch {
        ctx.addIssue({ code: "custom", message: 'expected a JSON key set {"keys":[{"kty":"OKP","crv":"Ed25519","x":...,"kid":...}]}' });
        return z.NEVER;
      }
    })
    .optional(),
  COPYBACK_STACK_ID: z.string().min(1).max(128).optional(),
  // Issue 22 part 5, opt-in: "on" makes the worker join a cgroup of its own at start, which its
  // owner receipts then name, so a same-host harness can prove every child gone (worker-platform.ts).
  // Off by default: R-OWN-11 asks for an operator on the same host.
  COPYBACK_WORKER_CGROUP: z.enum(["on", "off"]).default("off"),
}).superRefine((env, ctx) => {
  // A partial platform identity names no deployment: refused at start, never guessed (R-RW-6).
  const detected = detectControllerPlatform(env);
  if (detected.kind === "invalid") ctx.addIssue({ code: "custom", message: detected.message, path: ["RAILWAY_DEPLOYMENT_ID"] });
  if (env.COPYBACK_WORKER_CGROUP === "on" && detected.kind === "detected") {
    ctx.addIssue({ code: "custom", message: "COPYBACK_WORKER_CGROUP=on and the Railway variables name two controller platforms", path: ["COPYBACK_WORKER_CGROUP"] });
  }
  const harness = [env.COPYBACK_HARNESS_URL, env.COPYBACK_HARNESS_FLEET_TOKEN, env.COPYBACK_HARNESS_KEYS, env.COPYBACK_STACK_ID];
  if (harness.some((v) => v !== undefined) && harness.some((v) => v === undefined)) {
    ctx.addIssue({ code: "custom", message: "COPYBACK_HARNESS_URL, COPYBACK_HARNESS_FLEET_TOKEN, COPYBACK_HARNESS_KEYS and COPYBACK_STACK_ID go together", path: ["COPYBACK_HARNESS_URL"] });
  }
});

export type WorkerEnv = z.infer<typeof schema>;

export function parseWorkerEnv(source: NodeJS.ProcessEnv = process.env): WorkerEnv {
  const parsed = schema.safeParse(source);
  if (!parsed.success) throw new Error(`Invalid worker configuration:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** R-RW-1: the platform deployment this worker runs in, or undefined off any recognised platform. */
export function controllerPlatformOf(env: WorkerEnv): ControllerPlatformIdentity | undefined {
  const detected = detectControllerPlatform(env);
  return detected.kind === "detected" ? detected.identity : undefined;
}

/** R-RW-5: the tenant's harness configuration (keys imported), or undefined when none is configured. */
export async function harnessConfigOf(env: WorkerEnv): Promise<TenantHarnessConfig | undefined> {
  if (!env.COPYBACK_HARNESS_URL || !env.COPYBACK_HARNESS_FLEET_TOKEN || !env.COPYBACK_HARNESS_KEYS || !env.COPYBACK_STACK_ID) return undefined;
  return { url: env.COPYBACK_HARNESS_URL, fleetToken: env.COPYBACK_HARNESS_FLEET_TOKEN, stack: env.COPYBACK_STACK_ID, keys: await importHarnessKeys(env.COPYBACK_HARNESS_KEYS) };
}
