// environments.config for the local provider. Unknown keys are kept for other readers (the
// agent's command lives elsewhere); known keys must have the right type.
import { z } from "zod";
import { DomainError } from "../../errors";

export const localEnvironmentConfig = z
  .object({
    /** Network inside a bubblewrap sandbox; without bubblewrap nothing is cut off either way. */
    allowNetwork: z.boolean().default(false),
  })
  .loose();
export type LocalEnvironmentConfig = z.infer<typeof localEnvironmentConfig>;

export function parseLocalConfig(config: unknown): LocalEnvironmentConfig {
  const parsed = localEnvironmentConfig.safeParse(config ?? {});
  if (!parsed.success) {
    throw new DomainError("invalid", "provider_config_invalid", `The local environment's configuration is invalid: ${parsed.error.issues[0]?.message ?? "unknown"}.`);
  }
  return parsed.data;
}
