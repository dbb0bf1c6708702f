// Looking up the plugin pinned on a lease as a typed result: the release and reuse paths must
// turn "no such plugin" into a pending or skipped lease, never into a fallback call (R-EX-6).
// The pin itself is the registry's rule (ProviderRegistry.forLease); capabilities are asked with
// the registry's hasCapability.
import { isDomainError } from "../errors";
import type { EnvironmentProvider } from "../providers/types";
import type { LeaseProviderRegistry } from "./lease-types";

export type PluginLookup =
  | { kind: "found"; plugin: EnvironmentProvider }
  | { kind: "unavailable"; code: "provider_plugin_unavailable" | "provider_plugin_mismatch"; message: string };

/** R-EX-6: exactly the plugin recorded on the lease; another plugin of the same provider never serves it. */
export function pluginForLease(registry: LeaseProviderRegistry, lease: { pluginId: string; provider: string }): PluginLookup {
  try {
    return { kind: "found", plugin: registry.forLease(lease) };
  } catch (error) {
    if (isDomainError(error) && (error.code === "provider_plugin_unavailable" || error.code === "provider_plugin_mismatch")) {
      return { kind: "unavailable", code: error.code, message: error.message };
    }
    throw error;
  }
}
