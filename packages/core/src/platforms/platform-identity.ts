// R-RW-1, R-RW-6: the cloud platform a copyback's controller ran on, as its owner receipt records
// it (`nativeWorkspaceFinalizationOwner.platform`). Only a platform whose harness can prove the
// controller's stop has a schema here (Railway); a receipt naming any other platform is kept as
// "unsupported" (operator path), never mistaken for a malformed receipt or for a Railway one.
import { z } from "zod";

// Railway's ids are opaque strings (UUIDs today); the bound keeps a stored receipt small and the
// character set keeps them printable in Recovery details and the run log.
export const platformId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_-]+$/, "expected an id of letters, digits, '-' or '_'");

export const RAILWAY_PLATFORM = "railway";

/** R-RW-1: the exact deployment a Railway controller ran in. */
export const railwayIdentity = z.strictObject({
  kind: z.literal(RAILWAY_PLATFORM),
  projectId: platformId,
  environmentId: platformId,
  serviceId: platformId,
  deploymentId: platformId,
});
export type RailwayIdentity = z.infer<typeof railwayIdentity>;

export const WORKER_CGROUP_PLATFORM = "worker_cgroup";

/**
 * The worker-cgroup platform (issue 22 part 5, opt-in): the cgroup of its own a worker joined at
 * start, on one boot of one host. `path` is the group's path inside its hierarchy (as
 * /proc/<pid>/cgroup names it); its last segment is `copyback-worker-<hex>`, so a harness can tell
 * a worker's group from any other.
 */
export const workerCgroupIdentity = z.strictObject({
  kind: z.literal(WORKER_CGROUP_PLATFORM),
  version: z.union([z.literal(1), z.literal(2)]),
  path: z
    .string()
    .max(512)
    .regex(/^(\/[A-Za-z0-9_.-]+)*\/copyback-worker-[0-9a-f]{16}$/, "expected a worker cgroup path ending in copyback-worker-<16 hex>")
    .refine((p) => !p.split("/").some((seg) => seg === "." || seg === ".."), "no . or .. segments"),
  bootId: z.string().regex(/^[0-9a-f-]{36}$/, "expected the kernel's boot id"),
});
export type WorkerCgroupIdentity = z.infer<typeof workerCgroupIdentity>;

/** Every identity a harness can prove the stop of. */
export const controllerPlatformIdentity = z.discriminatedUnion("kind", [railwayIdentity, workerCgroupIdentity]);
export type ControllerPlatformIdentity = z.infer<typeof controllerPlatformIdentity>;

const SUPPORTED_KINDS: readonly string[] = [RAILWAY_PLATFORM, WORKER_CGROUP_PLATFORM];

/**
 * What a receipt's `platform` key may hold: a supported identity, or another platform's record
 * (a newer or older controller's), read as unsupported. A supported kind's record that fails its
 * schema is refused here, so the whole receipt reads as malformed: a half identity never reaches a harness.
 */
export const recordedPlatform = z.union([
  railwayIdentity,
  workerCgroupIdentity,
  z.looseObject({ kind: z.string().min(1).max(64).refine((kind) => !SUPPORTED_KINDS.includes(kind), "a supported platform's identity must be complete") }),
]);
export type RecordedPlatform = z.infer<typeof recordedPlatform>;

/** How a stale owner's stop could be proven (R-RW-2, R-RW-6): by its platform's harness, or only by an operator. */
export type PlatformProof =
  | { kind: "harness"; identity: ControllerPlatformIdentity }
  /** A legacy receipt (no identity) or a platform without a harness: "operator assistance is needed". */
  | { kind: "operator"; reason: "no_platform_identity" | "unsupported_platform" };

export function platformProofOf(platform: RecordedPlatform | undefined): PlatformProof {
  if (platform === undefined) return { kind: "operator", reason: "no_platform_identity" };
  const parsed = controllerPlatformIdentity.safeParse(platform);
  return parsed.success ? { kind: "harness", identity: parsed.data } : { kind: "operator", reason: "unsupported_platform" };
}

export function sameIdentity(a: ControllerPlatformIdentity, b: ControllerPlatformIdentity): boolean {
  if (a.kind === RAILWAY_PLATFORM && b.kind === RAILWAY_PLATFORM) {
    return a.projectId === b.projectId && a.environmentId === b.environmentId && a.serviceId === b.serviceId && a.deploymentId === b.deploymentId;
  }
  if (a.kind === WORKER_CGROUP_PLATFORM && b.kind === WORKER_CGROUP_PLATFORM) return a.version === b.version && a.path === b.path && a.bootId === b.bootId;
  return false;
}

/** The identity in a few words, for the recorded stop evidence (no host name, no process id: R-UI-1). */
export function identityInWords(identity: ControllerPlatformIdentity): string {
  return identity.kind === RAILWAY_PLATFORM
    ? `Railway deployment ${identity.deploymentId} is REMOVED with deploymentStopped true`
    : `worker cgroup ${identity.path} (cgroup v${identity.version}) held no process (nor any group below it) when the harness read it`;
}
