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

/** Every identity a harness can prove the stop of (one member today). */
export const controllerPlatformIdentity = railwayIdentity;
export type ControllerPlatformIdentity = RailwayIdentity;

/**
 * What a receipt's `platform` key may hold: a supported identity, or another platform's record
 * (a newer or older controller's), read as unsupported. A `railway` record that fails its schema
 * is refused here, so the whole receipt reads as malformed: a half identity never reaches a harness.
 */
export const recordedPlatform = z.union([
  railwayIdentity,
  z.looseObject({ kind: z.string().min(1).max(64).refine((kind) => kind !== RAILWAY_PLATFORM, "a railway identity must be complete") }),
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
  return a.kind === b.kind && a.projectId === b.projectId && a.environmentId === b.environmentId && a.serviceId === b.serviceId && a.deploymentId === b.deploymentId;
}
