// Whether a new environment may be created as asked (issue 21 part 5: `copyback environment
// create` and the console's "New environment" form). Pure: the service (create-environment.ts)
// loads the company and writes the row; everything decided here needs no database.
//
// The configuration is checked by the same zod schema its provider parses it with at every
// acquisition (providers/environment-config.ts, as `environment configure` checks it), and a
// configuration that carries a key-like field anywhere is refused: a key is never stored in an
// environment; a Daytona one names the variable that holds it (apiKeyEnv). Messages name fields,
// never their values.
import { DomainError, isDomainError } from "../errors";
import { LEASE_POLICIES, type LeasePolicy } from "../leases/lease-types";
import { refuseStoredKeys, validateEnvironmentConfig } from "../providers/environment-config";
import type { ProviderKind } from "../providers/types";

/** The plugin each provider's environments are created with: the ones every install registers (providers/default-registry.ts). */
export const BUILTIN_PLUGINS: Readonly<Record<ProviderKind, string | null>> = {
  local: "builtin.local",
  fake: "builtin.fake",
  daytona: "builtin.daytona",
  // No built-in plugin serves it, and nothing here could check its configuration.
  railway: null,
};

/** The providers an environment can be created with here. */
export const CREATABLE_PROVIDERS = (Object.keys(BUILTIN_PLUGINS) as ProviderKind[]).filter((p) => BUILTIN_PLUGINS[p] !== null);

export const MAX_ENVIRONMENT_NAME = 100;
// A name is shown in lists, logs and labels: printable, one line.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export interface NewEnvironmentRequest {
  name: string;
  provider: string;
  /** The configuration as given (a parsed JSON value); absent: `{}`, which every built-in schema accepts with its defaults. */
  config?: unknown;
  /** Absent: the schema's default (`ephemeral`). */
  leasePolicy?: string;
}

export interface NewEnvironment {
  name: string;
  provider: ProviderKind;
  pluginId: string;
  /** Stored as given (not with the schema's defaults applied), as `environment configure` stores it. */
  config: Record<string, unknown>;
  leasePolicy: LeasePolicy;
}

export type NewEnvironmentDecision =
  | { kind: "admit"; environment: NewEnvironment }
  /** `field` is the request's field at fault (a form shows the message beside it). */
  | { kind: "reject"; code: string; field: "name" | "provider" | "config" | "leasePolicy"; message: string };

const reject = (code: string, field: "name" | "provider" | "config" | "leasePolicy", message: string): NewEnvironmentDecision => ({ kind: "reject", code, field, message });

export function decideNewEnvironment(request: NewEnvironmentRequest): NewEnvironmentDecision {
  const name = request.name.trim();
  if (name.length === 0) return reject("environment_name_invalid", "name", "Give the environment a name.");
  if (name.length > MAX_ENVIRONMENT_NAME) return reject("environment_name_invalid", "name", `An environment's name is at most ${MAX_ENVIRONMENT_NAME} characters.`);
  if (CONTROL.test(name)) return reject("environment_name_invalid", "name", "An environment's name is one line of printable characters.");

  if (!Object.hasOwn(BUILTIN_PLUGINS, request.provider)) {
    return reject("provider_unknown", "provider", `Unknown provider ${JSON.stringify(request.provider)}: one of ${CREATABLE_PROVIDERS.join(", ")}.`);
  }
  const provider = request.provider as ProviderKind;
  const pluginId = BUILTIN_PLUGINS[provider];
  if (pluginId === null) {
    return reject("provider_unsupported", "provider", `No built-in plugin of this instance serves the ${provider} provider, so its configuration cannot be checked: one of ${CREATABLE_PROVIDERS.join(", ")}.`);
  }

  const config = request.config === undefined ? {} : request.config;
  try {
    refuseStoredKeys(provider, config);
    validateEnvironmentConfig(provider, config);
  } catch (error) {
    if (isDomainError(error)) return reject(error.code, "config", error.message);
    throw error;
  }

  const leasePolicy = request.leasePolicy ?? "ephemeral";
  if (!(LEASE_POLICIES as readonly string[]).includes(leasePolicy)) {
    return reject("lease_policy_invalid", "leasePolicy", `The lease policy must be one of ${LEASE_POLICIES.join(", ")}.`);
  }
  return { kind: "admit", environment: { name, provider, pluginId, config: config as Record<string, unknown>, leasePolicy: leasePolicy as LeasePolicy } };
}

/** The decision's refusal as the typed error services throw (invalid: exit 2 in the CLI, BAD_REQUEST in tRPC). */
export function newEnvironmentRefusal(decision: Extract<NewEnvironmentDecision, { kind: "reject" }>): DomainError {
  return new DomainError("invalid", decision.code, decision.message, { field: decision.field });
}
