// environments.config for the local provider. Unknown keys are kept for other readers (the
// agent's command lives elsewhere); known keys must have the right type.
import { z } from "zod";
import { DomainError } from "../../errors";
import { DEFAULT_RESOURCE_LIMITS, resourceLimits } from "./resource-limits";

export const localEnvironmentConfig = z
  .object({
    /** Network inside a bubblewrap sandbox; without bubblewrap nothing is cut off either way. */
    allowNetwork: z.boolean().default(false),
    /** Resource limits of the agent (resource-limits.ts); each defaults, `null` turns one off. */
    limits: resourceLimits.default(DEFAULT_RESOURCE_LIMITS),
    /**
     * Rehearsal only (README "Rehearsing recovery"): the next `failExports` exports (primary, delta and
     * salvage) of each new lease fail as a transport failure, counted in the controller that
     * exports. Off unless present; the sandbox and its files are never touched by it.
     */
    faults: z.strictObject({ failExports: z.number().int().min(1).max(1_000_000) }).optional(),
  })
  .loose();
export type LocalEnvironmentConfig = z.infer<typeof localEnvironmentConfig>;

export function parseLocalConfig(config: unknown): LocalEnvironmentConfig {
  const parsed = localEnvironmentConfig.safeParse(config ?? {});
  if (!parsed.success) {
    throw new DomainError("invalid", "provider_config_invalid", `The local environment's configuration is invalid: ${parsed.error.issues.map((i) => `${i.path.join(".") || "config"}: ${i.message}`).join("; ")}.`);
  }
  return parsed.data;
}
