// The harness's configuration, parsed once (process.env is read nowhere else). The harness holds
// what tenants never receive (R-RW-5): the Railway token and the signing key. Each stack's
// Railway resources come from here, never from a request (R-RW-2).
import { z } from "zod";
import { STOP_RECEIPT_DEFAULT_TTL_SECONDS, STOP_RECEIPT_MAX_LIFETIME_SECONDS } from "@copyback/core/platforms";

const id = z.string().min(1).max(128).regex(/^[A-Za-z0-9_-]+$/);

/** The Railway resources a stack's workers run in: a deployment outside them is never attested. */
const railwayStack = z.strictObject({ projectId: id, environmentId: id, serviceId: id });
export type RailwayStack = z.infer<typeof railwayStack>;

const absolute = z.string().max(512).regex(/^\/[A-Za-z0-9_./-]*$/).refine((p) => !p.split("/").some((seg) => seg === "." || seg === ".."), "no . or .. segments");

/**
 * Issue 22 part 5: a stack whose workers run in cgroups of their own on this harness's host: the
 * hierarchy (version and where it is mounted here) and the group the workers' groups are made in
 * (their path inside the hierarchy). A worker group elsewhere is never attested.
 */
const workerCgroupStack = z.strictObject({ kind: z.literal("worker_cgroup"), version: z.union([z.literal(1), z.literal(2)]), mountPoint: absolute, parentPath: absolute });
export type WorkerCgroupStack = z.infer<typeof workerCgroupStack>;

const stackResources = z.union([workerCgroupStack, railwayStack]);
export type StackResources = z.infer<typeof stackResources>;

const jsonOf = <T extends z.ZodType>(inner: T) =>
  z.string().transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: "not JSON" });
      return z.NEVER;
    }
  }).pipe(inner);

const schema = z.object({
  HARNESS_HOST: z.string().default("127.0.0.1"),
  HARNESS_PORT: z.coerce.number().int().min(0).max(65_535).default(3201),
  // The fleet token: a bearer secret shared by the tenants. It authorizes a read request, never
  // stop evidence (R-RW-5).
  HARNESS_FLEET_TOKEN: z.string().min(32, "the fleet token must be at least 32 characters"),
  // { "<stack id>": { projectId, environmentId, serviceId } }
  HARNESS_STACKS: jsonOf(z.record(id, stackResources).refine((stacks) => Object.keys(stacks).length > 0, "at least one stack")),
  // The Ed25519 private key as a JWK (kty OKP, crv Ed25519, d, x) and the kid tenants know it by.
  HARNESS_SIGNING_KEY: jsonOf(z.looseObject({ kty: z.literal("OKP"), crv: z.literal("Ed25519"), d: z.string().min(1), x: z.string().min(1) })),
  HARNESS_SIGNING_KID: z.string().min(1).max(128),
  HARNESS_RECEIPT_TTL_SECONDS: z.coerce.number().int().min(10).max(STOP_RECEIPT_MAX_LIFETIME_SECONDS).default(STOP_RECEIPT_DEFAULT_TTL_SECONDS),
  // Railway's public GraphQL API and the harness's own token (a team or account token).
  RAILWAY_API_URL: z.url({ protocol: /^https?$/ }).default("https://backboard.railway.com/graphql/v2"),
  // Required when a stack is on Railway; a harness serving only worker-cgroup stacks has none.
  RAILWAY_API_TOKEN: z.string().min(1).optional(),
  RAILWAY_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
}).superRefine((env, ctx) => {
  if (!env.RAILWAY_API_TOKEN && Object.values(env.HARNESS_STACKS).some((stack) => !("kind" in stack))) {
    ctx.addIssue({ code: "custom", message: "a Railway stack needs RAILWAY_API_TOKEN", path: ["RAILWAY_API_TOKEN"] });
  }
});

export type HarnessEnv = z.infer<typeof schema>;

export function parseHarnessEnv(source: NodeJS.ProcessEnv = process.env): HarnessEnv {
  const parsed = schema.safeParse(source);
  if (!parsed.success) throw new Error(`Invalid harness configuration:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
