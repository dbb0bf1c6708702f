// Validating an environment's stored configuration before it is written (the CLI's `environment
// configure`): the same zod schema the provider parses the config with at run time, so a typo in
// a rehearsal fault (README "Rehearsing recovery") is refused with its path instead of failing
// the next run. Pure: no I/O.
import { DomainError } from "../errors";
import { parseDaytonaConfig } from "./daytona/config";
import { parseFakeConfig } from "./fake/config";
import { parseLocalConfig } from "./local/config";
import type { ProviderKind } from "./types";

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
  validateEnvironmentConfig(provider, next);
  return next as Record<string, unknown>;
}
