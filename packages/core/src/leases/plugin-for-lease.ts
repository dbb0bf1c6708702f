// Looking up the plugin pinned on a lease and asking it for a capability, as typed results: the
// release and reuse paths must turn "no such plugin" or "no such capability" into a pending or
// skipped lease, never into a fallback call (R-EX-6).
import { isDomainError } from "../errors";
import { requireCapability } from "../providers/registry";
import type { EnvironmentProvider, ProviderCapability } from "../providers/types";
import type { LeaseProviderRegistry } from "./lease-types";

export type PluginLookup =
  | { kind: "found"; plugin: EnvironmentProvider }
  | { kind: "unavailable"; code: "provider_plugin_unavailable" | "provider_plugin_mismatch"; message: string };

/** R-EX-6: exactly the plugin recorded on the lease; another plugin of the same provider never serves it. */
export function pluginForLease(registry: LeaseProviderRegistry, lease: { pluginId: string; provider: string }): PluginLookup {
  let plugin: EnvironmentProvider;
  try {
    plugin = registry.forLease(lease);
  } catch (error) {
    if (isDomainError(error) && (error.code === "provider_plugin_unavailable" || error.code === "provider_plugin_mismatch")) {
      return { kind: "unavailable", code: error.code, message: error.message };
    }
    throw error;
  }
  // Checked here too, so a registry that resolved loosely still cannot hand over another plugin.
  if (plugin.pluginId !== lease.pluginId || plugin.provider !== lease.provider) {
    return {
      kind: "unavailable",
      code: "provider_plugin_mismatch",
      message: `Lease is pinned to ${lease.pluginId} (${lease.provider}); the registry returned ${plugin.pluginId} (${plugin.provider}).`,
    };
  }
  return { kind: "found", plugin };
}

/** The provider operation of a capability (every one is named after its capability but the stop). */
type OperationOf<C extends ProviderCapability> = C extends "environmentStopLease" ? "stopLease" : C & keyof EnvironmentProvider;

/** Whether the plugin advertises `capability` and implements its operation (the registry's rule, as a type guard). */
export function hasCapability<C extends ProviderCapability>(
  plugin: EnvironmentProvider,
  capability: C,
): plugin is EnvironmentProvider & Required<Pick<EnvironmentProvider, OperationOf<C>>> {
  try {
    requireCapability(plugin, capability);
    return true;
  } catch (error) {
    if (isDomainError(error) && error.code === "provider_capability_missing") return false;
    throw error;
  }
}
