// Validating an environment's stored configuration before it is written (the CLI's `environment
// configure` and `create`): the same zod schema the provider parses the config with at run time, so a typo in
// a rehearsal fault (README "Rehearsing recovery") is refused with its path instead of failing
// the next run. Pure: no I/O.
import { DomainError } from "../errors";
import { parseDaytonaConfig } from "./daytona/config";
import { parseFakeConfig } from "./fake/config";
import { parseLocalConfig } from "./local/config";
import { keyLikeFields } from "./environment-view";
import type { ProviderKind } from "./types";

/**
 * The one rule for every write of an environment's configuration (`environment create`, the
 * console's New environment form, `environment configure`): a key is never stored in it, whatever
 * the provider's schema would accept. Any key-like field (environment-view.ts isKeyLikeField:
 * deliberately wide) refuses the write; a Daytona key is named by its variable (apiKeyEnv). Not
 * applied when a stored configuration is read at run time: an older one is shown hidden
 * (environment-view.ts), never refused under a running agent.
 */
export function refuseStoredKeys(provider: ProviderKind, config: unknown): void {
  const keys = keyLikeFields(config);
  if (keys.length === 0) return;
  const hint = provider === "daytona" ? " Put the NAME of the environment variable that holds the key in apiKeyEnv." : "";
  throw new DomainError("invalid", "provider_config_holds_key", `A key is never stored in an environment's configuration: remove ${keys.join(", ")}.${hint}`);
}

/** Throws provider_config_invalid (with the offending path) or provider_config_unsupported. */
export function validateEnvironmentConfig(provider: ProviderKind, config: unknown): void {
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    throw new DomainError("invalid", "provider_config_invalid", "An environment's configuration must be a JSON object.");
  }
  switch (provider) {
    case "local":
      parseLocalConfig(config);
      return;
    case "fake":
      parseFakeConfig(config);
      return;
    case "daytona":
      parseDaytonaConfig(config);
      return;
    default:
      // No built-in plugin of this instance reads it: nothing here could check what it means.
      throw new DomainError("invalid", "provider_config_unsupported", `The ${provider} provider's configuration is not managed by this instance's built-in providers.`);
  }
}

export type ConfigChange =
  /** Replace the whole configuration. */
  | { kind: "replace"; config: unknown }
  /** Set (or with `null`, remove) the rehearsal faults, keeping every other key. */
  | { kind: "faults"; faults: unknown };

/** The configuration after a change, validated for the provider (pure). */
export function nextEnvironmentConfig(provider: ProviderKind, current: unknown, change: ConfigChange): Record<string, unknown> {
  const base = current !== null && typeof current === "object" && !Array.isArray(current) ? { ...(current as Record<string, unknown>) } : {};
  let next: unknown;
  if (change.kind === "replace") next = change.config;
  else if (change.faults === null) {
    delete base.faults;
    next = base;
  } else next = { ...base, faults: change.faults };
  refuseStoredKeys(provider, next);
  validateEnvironmentConfig(provider, next);
  return next as Record<string, unknown>;
}
